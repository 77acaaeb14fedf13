package dev.orderless.apply;

import static com.mongodb.client.model.Filters.eq;
import static org.assertj.core.api.Assertions.assertThat;

import com.mongodb.client.MongoCollection;
import com.mongodb.client.MongoDatabase;
import dev.orderless.oracle.ReferenceModel;
import dev.orderless.oracle.Workers;
import dev.orderless.testing.MongoExtension;
import java.math.BigInteger;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import org.bson.BsonDocument;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/** Issue 50 (from its review): one hot counter, several threads, single applies and batches, edges of a long. */
@ExtendWith(MongoExtension.class)
class HotCounterThreadsTest {
    private static final CollectionSchema SCHEMA = CollectionSchema.builder().counter("cents").register("name").build();
    private static final ReferenceModel ORACLE = new ReferenceModel(SCHEMA);
    private static final long[] DELTAS = {1, -1, 7, Long.MAX_VALUE, Long.MIN_VALUE, Long.MAX_VALUE / 3, -5};

    @Test
    void a_hot_counter_applied_by_four_threads_sums_exactly(MongoDatabase db) throws Exception {
        MongoCollection<BsonDocument> live = db.getCollection("hot", BsonDocument.class);
        GuardedApplier applier = GuardedApplier.create(live, SCHEMA, ApplierOptions.ofDefaults());
        for (int round = 0; round < 6; round++) {
            Random random = new Random(round);
            String entity = "h" + round;
            List<Operation> ops = new ArrayList<>();
            for (long seq = 1; seq <= 450; seq++) {
                int k = random.nextInt(200);
                ops.add(k == 0 ? Operation.delete(entity, seq)
                        : k == 1 ? Operation.assign(entity, seq, "name", new org.bson.BsonString("n" + seq))
                        : Operation.increment(entity, seq, "cents", round % 2 == 0 ? random.nextInt(11) - 3
                                : DELTAS[random.nextInt(DELTAS.length)]));
            }
            List<Operation> delivered = new ArrayList<>(ops);
            for (int i = 0; i < 80; i++) {
                delivered.add(ops.get(random.nextInt(ops.size())));
            }
            Collections.shuffle(delivered, random);
            Map<Outcome, Integer> outcomes = new ConcurrentHashMap<>();
            List<Throwable> errors = Collections.synchronizedList(new ArrayList<>());
            boolean batches = round % 3 == 2;
            if (batches) {
                ConcurrentLinkedQueue<List<Operation>> queue = new ConcurrentLinkedQueue<>();
                for (int from = 0; from < delivered.size(); from += 25) {
                    queue.add(delivered.subList(from, Math.min(delivered.size(), from + 25)));
                }
                Workers.drain(4, queue, batch -> {
                    for (BatchResult r : applier.applyAll(batch)) {
                        if (r instanceof BatchResult.Done d) {
                            outcomes.merge(d.outcome(), 1, Integer::sum);
                        } else {
                            errors.add(new AssertionError(String.valueOf(r)));
                        }
                    }
                });
            } else {
                ConcurrentLinkedQueue<Operation> queue = new ConcurrentLinkedQueue<>(delivered);
                Workers.drain(4, queue, op -> {
                    try {
                        outcomes.merge(applier.apply(op), 1, Integer::sum);
                    } catch (RuntimeException e) {
                        errors.add(e);
                    }
                });
            }
            BsonDocument stored = live.find(eq("_id", entity)).first();
            System.out.println("[counters] hot counter, round " + round + (batches ? " in batches" : "") + ": outcomes " + outcomes + ", errors "
                    + errors.size() + (errors.isEmpty() ? "" : " first " + errors.get(0)));
            assertThat(errors).as("round %d", round).isEmpty();
            EntityState expected = ORACLE.replay(ops).get(entity);
            assertThat(EntityState.of(stored, SCHEMA)).as("round %d", round).isEqualTo(expected);
            BigInteger sum = expected.counters().get("cents");
            assertThat(stored.get("cents")).isEqualTo(sum == null ? null : CounterValues.stored(sum));
        }
    }
}
