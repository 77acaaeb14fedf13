package dev.orderless.boot;

import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.MongoDatabase;
import dev.orderless.apply.ApplierOptions;
import dev.orderless.apply.GuardedApplier;
import dev.orderless.lease.LeaseProvider;
import dev.orderless.lease.MongoLeaseProvider;
import dev.orderless.view.FeederOptions;
import dev.orderless.view.ViewFeeder;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import org.bson.BsonDocument;
import org.springframework.context.SmartLifecycle;

/**
 * One {@link ViewFeeder} per {@link OrderlessView} bean, as one Spring lifecycle bean: started after the
 * other beans, stopped before them (a clean stop commits each feeder's position and releases its lease).
 */
public final class OrderlessFeeders implements SmartLifecycle {
    private final MongoClient client;
    private final MongoDatabase database;
    private final List<OrderlessView> views;
    private final MongoCollection<BsonDocument> leases;
    private final Function<OrderlessView, FeederOptions> options;
    private final MeterRegistry meters;
    private final Map<String, ViewFeeder> running = new LinkedHashMap<>();

    OrderlessFeeders(MongoClient client, MongoDatabase database, List<OrderlessView> views,
                     MongoCollection<BsonDocument> leases, Function<OrderlessView, FeederOptions> options,
                     MeterRegistry meters) {
        this.client = client;   // for the oplog's reach, when a stored position is too old to resume
        this.database = database;
        this.views = List.copyOf(views);
        this.leases = leases;
        this.options = options;
        this.meters = meters;
    }

    @Override
    public synchronized void start() {
        for (OrderlessView view : views) {
            if (!running.containsKey(view.name())) {
                GuardedApplier writes = GuardedApplier.create(database.getCollection(view.collection(), BsonDocument.class),
                        view.schema(), ApplierOptions.ofDefaults().withMeters(meters));
                FeederOptions feeder = options.apply(view);
                LeaseProvider provider = MongoLeaseProvider.create(leases, feeder.lease());   // the view's own timing
                running.put(view.name(), ViewFeeder.builder(database, view.source(), writes, view.projection(), provider)
                        .options(feeder).meters(meters).client(client).start());
            }
        }
    }

    @Override
    public synchronized void stop() {
        running.values().parallelStream().forEach(ViewFeeder::close);   // each commits and releases: together
        running.clear();
    }

    @Override
    public synchronized boolean isRunning() {
        return !running.isEmpty();
    }

    /** The feeders by view name, while running. */
    public synchronized Map<String, ViewFeeder> feeders() {
        return Map.copyOf(running);
    }

    List<OrderlessView> views() {
        return views;
    }
}
