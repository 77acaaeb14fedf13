package dev.orderless.amqp;

import com.mongodb.client.MongoDatabase;
import dev.orderless.testing.MongoExtension;
import dev.orderless.testing.rabbit.OnRabbitMq4;
import dev.orderless.testing.rabbit.RabbitExtension;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.amqp.rabbit.connection.ConnectionFactory;

/** {@link ConsumerEndToEndTest}'s batched run on RabbitMQ 4: the consumer end to end on a 4.0 quorum queue. */
@OnRabbitMq4
@ExtendWith({MongoExtension.class, RabbitExtension.class})
class ConsumerEndToEndOnRabbitMq4Test {

    @Test
    void shuffled_and_duplicated_messages_in_batches_of_fifty_converge_and_are_acked_once(ConnectionFactory cf,
                                                                                          MongoDatabase db)
            throws Exception {
        ConsumerEndToEndTest.run(cf, db, 50);
    }
}
