package dev.orderless.testing.chaos;

import com.mongodb.client.MongoDatabase;
import org.springframework.amqp.rabbit.connection.ConnectionFactory;

/**
 * What a consumer of a chaos run is given: connections of its own, through proxies the run can cut, and where to
 * consume from and write to.
 *
 * @param connectionFactory the broker, through this consumer's proxy (its connection is this consumer's alone)
 * @param database          MongoDB, through this consumer's proxy: a database of this run's own
 * @param collection        the collection to apply to
 * @param queue             the queue to consume (its dead-letter queue is {@code queue + ".dlq"}, declared)
 * @param concurrency       the threads to consume with: 1 while a divergence is shrunk (one message at a time)
 */
public record ChaosContext(ConnectionFactory connectionFactory, MongoDatabase database, String collection,
                           String queue, int concurrency) {
}
