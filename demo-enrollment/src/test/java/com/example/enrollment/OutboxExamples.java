package com.example.enrollment;

import com.mongodb.client.MongoDatabase;
import dev.orderless.apply.Operation;
import dev.orderless.outbox.Outbox;
import dev.orderless.outbox.OutboxOptions;
import dev.orderless.outbox.OutboxRelay;
import dev.orderless.outbox.RelayOptions;
import dev.orderless.publish.ConfirmingPublisher;
import dev.orderless.stamp.Stamper;
import org.bson.BsonDocument;

/** The producer guide's outbox example, compiled and run by {@code ReadmeExamplesTest}. */
final class OutboxExamples {
    private OutboxExamples() {
    }

    static OutboxRelay recordThenRelay(MongoDatabase db, Stamper stamper, ConfirmingPublisher confirmingPublisher) {
        // tag::outbox[]
        Outbox outbox = Outbox.create(db.getCollection("orderless_outbox", BsonDocument.class), stamper, OutboxOptions.ofDefaults());
        outbox.record("student-17", seq -> Operation.add("student-17", seq, "classes", "CS 101"));
        OutboxRelay relay = OutboxRelay.start(db.getCollection("orderless_outbox", BsonDocument.class), confirmingPublisher,
                RelayOptions.ofDefaults());   // anywhere, as many as you like; close() on shutdown
        // end::outbox[]
        return relay;
    }
}
