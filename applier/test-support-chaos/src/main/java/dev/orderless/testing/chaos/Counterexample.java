package dev.orderless.testing.chaos;

import dev.orderless.apply.EntityState;
import dev.orderless.apply.Operation;
import java.io.PrintStream;
import java.util.List;
import java.util.Optional;
import org.bson.BsonDocument;

/**
 * The smallest breaking history a chaos run found: the messages of one entity, delivered one at a time in this
 * order through one consumer of the team's, after which its document differs from the reference model's state.
 *
 * @param delivery    the messages in the order delivered (a duplicate appears twice)
 * @param envelopes   each as it was published
 * @param expected    the reference model's state of those operations
 * @param stored      the document the consumer left (empty if it wrote none)
 * @param startedWith how many messages of the entity the shrinking started from
 * @param steps       how many smaller histories it tried
 */
public record Counterexample(List<Operation> delivery, List<String> envelopes, EntityState expected,
                             Optional<BsonDocument> stored, int startedWith, int steps) {
    public Counterexample {
        delivery = List.copyOf(delivery);
        envelopes = List.copyOf(envelopes);
    }

    /** How many messages it has. */
    public int size() {
        return delivery.size();
    }

    void print(PrintStream out) {
        out.printf("[chaos] smallest breaking history: %d message(s) of '%s' (shrunk from %d in %d steps), delivered"
                + " one at a time in this order:%n", size(), expected.entity(), startedWith, steps);
        envelopes.forEach(envelope -> out.println("[chaos]   " + envelope));
        out.println("[chaos] expected (the reference model): " + expected);
        out.println("[chaos] stored:                         " + stored.map(BsonDocument::toJson).orElse("(none)"));
    }
}
