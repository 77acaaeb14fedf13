package dev.orderless.apply;

import static com.mongodb.client.model.Filters.eq;
import static org.assertj.core.api.Assertions.assertThat;

import com.mongodb.client.MongoCollection;
import com.mongodb.client.MongoDatabase;
import dev.orderless.TransientException;
import dev.orderless.oracle.ReferenceModel;
import dev.orderless.testing.ManualClock;
import dev.orderless.testing.MongoExtension;
import java.math.BigInteger;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.bson.BsonDocument;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/** Issue 50 (from its review): compaction folding runs while three threads increment and delete one counter. */
@ExtendWith(MongoExtension.class)
class CompactionBesideCountersTest {
    private static final CollectionSchema SCHEMA = CollectionSchema.builder().counter("cents").build();
    private static final ReferenceModel ORACLE = new ReferenceModel(SCHEMA);
    private static final Set<Long> APPLIED = ConcurrentHashMap.newKeySet();

    @Test
    void compaction_beside_increments_and_deletes_keeps_the_exact_sum_of_what_was_not_refused(MongoDatabase db)
            throws Exception {
        ManualClock clock = new ManualClock();
        ApplierOptions options = ApplierOptions.ofDefaults().withClock(clock);
        MongoCollection<BsonDocument> live = db.getCollection("race", BsonDocument.class);
        GuardedApplier applier = GuardedApplier.create(live, SCHEMA, options);
        TombstoneCompactor compactor = TombstoneCompactor.create(live, SCHEMA, Duration.ofMinutes(1), options);
        for (int round = 0; round < 6; round++) {
            Random random = new Random(100 + round);
            String entity = "r" + round;
            List<Operation> ops = new ArrayList<>();
            for (long seq = 1; seq <= 400; seq++) {
                ops.add(random.nextInt(150) == 0 ? Operation.delete(entity, seq)
                        : Operation.increment(entity, seq, "cents", round % 2 == 0 ? random.nextInt(9) - 2
                                : (random.nextBoolean() ? Long.MAX_VALUE : Long.MIN_VALUE + random.nextInt(3))));
            }
            List<Operation> delivered = new ArrayList<>(ops);
            for (int i = 0; i < 60; i++) {
                delivered.add(ops.get(random.nextInt(ops.size())));
            }
            // mostly in order, with local shuffles, as consumers take them
            for (int i = 0; i + 20 <= delivered.size(); i += 20) {
                Collections.shuffle(delivered.subList(i, i + 20), random);
            }
            APPLIED.clear();
            ConcurrentLinkedQueue<Operation> queue = new ConcurrentLinkedQueue<>(delivered);
            Set<Long> refused = ConcurrentHashMap.newKeySet();
            List<Throwable> errors = Collections.synchronizedList(new ArrayList<>());
            AtomicBoolean done = new AtomicBoolean();
            ExecutorService pool = Executors.newFixedThreadPool(4);
            boolean batches = round % 2 == 1;
            List<Future<?>> workers = new ArrayList<>();
            for (int t = 0; t < 3; t++) {
                workers.add(pool.submit(() -> {
                    List<Operation> batch = new ArrayList<>();
                    for (Operation op = queue.poll(); op != null; op = queue.poll()) {
                        if (batches) {
                            batch.add(op);
                            if (batch.size() < 10) {
                                continue;
                            }
                            for (BatchResult r : applier.applyAll(batch)) {
                                handle(r, applier, refused, errors);
                            }
                            batch.clear();
                            continue;
                        }
                        handleOne(op, applier, refused, errors);
                    }
                    for (BatchResult r : applier.applyAll(batch)) {
                        handle(r, applier, refused, errors);
                    }
                    return null;
                }));
            }
            Future<?> compacting = pool.submit(() -> {
                while (!done.get()) {
                    clock.advance(Duration.ofSeconds(20));
                    try {
                        compactor.compact(entity);
                    } catch (TransientException e) {
                        // lost races: fine
                    }
                }
                return null;
            });
            for (Future<?> w : workers) {
                w.get(120, TimeUnit.SECONDS);
            }
            done.set(true);
            compacting.get(60, TimeUnit.SECONDS);
            pool.shutdownNow();
            assertThat(errors).as("round %d", round).isEmpty();
            BsonDocument stored = live.find(eq("_id", entity)).first();
            refused.removeAll(APPLIED);
            List<Operation> counted = ops.stream().filter(op -> !refused.contains(op.seq())).toList();
            EntityState expected = ORACLE.replay(counted).get(entity);
            System.out.println("[counters] compaction beside increments, round " + round + ": " + refused.size() + " refused, stored " + stored.get("cents"));
            assertThat(EntityState.of(stored, SCHEMA)).as("round %d refused %s", round, refused).isEqualTo(expected);
            BigInteger sum = expected.counters().get("cents");
            assertThat(stored.get("cents")).isEqualTo(sum == null ? null : CounterValues.stored(sum));
        }
    }

    private static void handleOne(Operation op, GuardedApplier applier, Set<Long> refused, List<Throwable> errors) {
        for (int attempt = 0; ; attempt++) {
            try {
                Outcome o = applier.apply(op);
                if (o == Outcome.BEYOND_HORIZON) {
                    refused.add(op.seq());
                } else if (o == Outcome.APPLIED) {
                    APPLIED.add(op.seq());
                }
                return;
            } catch (TransientException e) {
                if (attempt > 20) {
                    errors.add(e);
                    return;
                }
            } catch (RuntimeException e) {
                errors.add(e);
                return;
            }
        }
    }

    private static void handle(BatchResult r, GuardedApplier applier, Set<Long> refused, List<Throwable> errors) {
        if (r instanceof BatchResult.Done d) {
            if (d.outcome() == Outcome.BEYOND_HORIZON) {
                refused.add(d.op().seq());
            } else if (d.outcome() == Outcome.APPLIED) {
                APPLIED.add(d.op().seq());
            }
        } else if (r instanceof BatchResult.Failed f && f.error() instanceof TransientException) {
            handleOne(r.op(), applier, refused, errors);
        } else {
            errors.add(new AssertionError(String.valueOf(r)));
        }
    }
}
