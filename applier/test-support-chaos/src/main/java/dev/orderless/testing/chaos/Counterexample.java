package dev.orderless.testing.chaos;

import dev.orderless.apply.EntityState;
import dev.orderless.apply.Operation;
import java.io.PrintStream;
import java.util.List;
import java.util.Map;
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
 * @param storedState that document as orderless reads it, to compare with {@code expected} (empty if there is none,
 *                    or orderless cannot read it)
 * @param startedWith how many messages of the entity the shrinking started from
 * @param steps       how many smaller histories it tried
 */
public record Counterexample(List<Operation> delivery, List<String> envelopes, EntityState expected,
                             Optional<BsonDocument> stored, Optional<EntityState> storedState, int startedWith,
                             int steps) {
    /** Keeps unmodifiable copies of the lists. */
    public Counterexample {
        delivery = List.copyOf(delivery);
        envelopes = List.copyOf(envelopes);
    }

    /**
     * How many messages it has.
     *
     * @return the size of {@link #delivery()}
     */
    public int size() {
        return delivery.size();
    }

    /**
     * What differs between the expected and the stored state, one phrase each ({@code coupon: expected "SAVE70" at
     * seq 15, stored "SAVE49" at seq 7}); with no stored document, what differs from an entity never written.
     *
     * @return the differences, or one line saying orderless cannot read the stored document
     */
    public List<String> differences() {
        if (stored.isPresent() && storedState.isEmpty()) {
            return List.of("orderless cannot read the stored document");
        }
        return StateText.differences(expected, storedState.orElseGet(() -> new EntityState(expected.entity(), 0,
                Map.of(), Map.of(), Map.of())));
    }

    void print(PrintStream out) {
        out.printf("[chaos] smallest breaking history: %d message(s) of '%s' (shrunk from %d in %d steps), delivered"
                + " one at a time in this order:%n", size(), expected.entity(), startedWith, steps);
        envelopes.forEach(envelope -> out.println("[chaos]   " + envelope));
        out.println("[chaos] expected (the reference model): " + StateText.json(expected));
        out.println("[chaos] stored:                         " + storedState.map(StateText::json)
                .or(() -> stored.map(doc -> doc.toJson() + " (as stored: orderless cannot read it)"))
                .orElse("no document"));
        List<String> differences = differences();
        for (int i = 0; i < differences.size(); i++) {
            out.println("[chaos] " + (i == 0 ? "differs: " : "         ") + differences.get(i));
        }
    }
}
