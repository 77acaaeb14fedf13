package dev.orderless.apply;

import static org.assertj.core.api.Assertions.assertThat;

import com.mongodb.client.MongoCollection;
import dev.orderless.apply.internal.CounterBook;
import com.mongodb.client.MongoDatabase;
import com.mongodb.client.model.Filters;
import java.util.List;
import org.bson.BsonDocument;
import org.bson.BsonInt64;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import dev.orderless.testing.MongoExtension;

/**
 * Hot counters in one batch (issue 50, from its second review): a second compare-and-set of one entity in a round goes
 * as its op's blind write behind the first, in the same command, also where the first is not the round's first
 * compare-and-set and goes in a command of its own (it went in the bulk write sent before it).
 */
@ExtendWith(MongoExtension.class)
class HotCountersInOneBatchTest {
    private static final CollectionSchema SCHEMA = CollectionSchema.builder().counter("credits").build();

    private MongoCollection<BsonDocument> counters;

    @BeforeEach
    void setUp(MongoDatabase db) {
        counters = db.getCollection("counters", BsonDocument.class);
        GuardedApplier filler = GuardedApplier.create(counters, SCHEMA);
        for (String entity : List.of("a", "b")) {
            for (long seq = 1; seq <= CounterBook.PENDING_MAX; seq++) {   // no room left: the next one coalesces
                filler.apply(Operation.increment(entity, seq, "credits", 1));
            }
        }
    }

    /**
     * Two hot counters, two increments each, no other writer: a's compare-and-set opens the round's bulk write, so
     * b's goes in a command of its own, after the bulk write that carries b's second increment blind. That blind write
     * misses (no room yet), and b's compare-and-set has not changed the document when the miss is judged, so it counts
     * as a contended write: with one attempt allowed, the batch gives up on an op no other writer contended for.
     */
    @Test
    void two_hot_counters_in_one_batch_are_applied_without_a_contended_write() {
        GuardedApplier oneAttempt = GuardedApplier.create(counters, SCHEMA,
                ApplierOptions.ofDefaults().withMaxAttempts(1));

        List<BatchResult> results = oneAttempt.applyAll(List.of(
                Operation.increment("a", 251, "credits", 1), Operation.increment("a", 252, "credits", 1),
                Operation.increment("b", 251, "credits", 1), Operation.increment("b", 252, "credits", 1)));

        assertThat(results).allSatisfy(r -> assertThat(r).as("%s", r).isInstanceOfSatisfying(BatchResult.Done.class,
                done -> assertThat(done.outcome()).isEqualTo(Outcome.APPLIED)));
        assertThat(counters.find(Filters.eq("_id", "b")).first().get("credits")).isEqualTo(new BsonInt64(252));
    }
}
