package dev.orderless.outbox.boot;

import com.mongodb.client.MongoCollection;
import dev.orderless.outbox.OutboxRelay;
import dev.orderless.outbox.RelayOptions;
import dev.orderless.publish.ConfirmingPublisher;
import java.util.Optional;
import org.bson.BsonDocument;
import org.springframework.context.SmartLifecycle;

/** The relay as a Spring lifecycle bean: started with the context, closed (after its batch) when it stops. */
public final class OrderlessOutboxRelay implements SmartLifecycle {
    private final MongoCollection<BsonDocument> entries;
    private final ConfirmingPublisher publisher;
    private final RelayOptions options;
    private volatile Optional<OutboxRelay> relay = Optional.empty();

    OrderlessOutboxRelay(MongoCollection<BsonDocument> entries, ConfirmingPublisher publisher, RelayOptions options) {
        this.entries = entries;
        this.publisher = publisher;
        this.options = options;
    }

    /** The running relay, while it runs. */
    public Optional<OutboxRelay> relay() {
        return relay;
    }

    @Override
    public synchronized void start() {
        if (relay.isEmpty()) {
            relay = Optional.of(OutboxRelay.start(entries, publisher, options));
        }
    }

    @Override
    public synchronized void stop() {
        relay.ifPresent(OutboxRelay::close);
        relay = Optional.empty();
    }

    @Override
    public boolean isRunning() {
        return relay.isPresent();
    }
}
