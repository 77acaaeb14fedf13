package dev.orderless.history;

import static com.mongodb.client.model.Filters.in;
import static org.assertj.core.api.Assertions.assertThat;

import com.mongodb.client.MongoCollection;
import com.mongodb.client.MongoDatabase;
import dev.orderless.TransientException;
import dev.orderless.apply.BatchResult;
import dev.orderless.apply.EntityState;
import dev.orderless.apply.GuardedApplier;
import dev.orderless.apply.Operation;
import dev.orderless.oracle.Histories;
import dev.orderless.oracle.ReferenceModel;
import dev.orderless.oracle.Workers;
import dev.orderless.testing.MongoExtension;
import dev.orderless.testing.PropertyCheck;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;
import org.bson.BsonDocument;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * The history's guarantee as a property: for random histories delivered in random orders with duplicates, cut
 * into batches and recorded-then-applied from eight threads, the state the history gives as of every seq of
 * every entity equals the oracle's after the operations up to that seq, and as of the last seq equals the
 * live document; each version's states either side of it are the oracle's, and it says it changed the state
 * exactly where they differ. The histories re-add live elements at higher seqs with other attributes (issue 50:
 * such a version was shown as superseded, the live document holding its entry): each is a change, and the state
 * after it holds its attributes.
 */
@ExtendWith(MongoExtension.class)
class HistoryPropertiesTest {
    private static final ReferenceModel ORACLE = new ReferenceModel(Histories.ALL_TYPES);
    private static final AtomicLong PREFIXES = new AtomicLong();
    private static final LongAdder STATES_CHECKED = new LongAdder();
    private static final LongAdder RETRIES = new LongAdder();
    private static final LongAdder ATTRIBUTE_CHANGES = new LongAdder();

    @AfterAll
    static void printCounts() {
        System.out.println("[history] " + STATES_CHECKED.sum() + " states as of a seq checked against the oracle ("
                + ATTRIBUTE_CHANGES.sum() + " re-adds of a live element with other attributes), " + RETRIES.sum()
                + " ops applied again after a transient error");
        assertThat(ATTRIBUTE_CHANGES.sum()).as("the histories change attributes of live elements").isPositive();
    }

    @Test
    void the_state_as_of_every_seq_is_the_oracles_and_the_last_is_the_live_document(MongoDatabase db) {
        MongoCollection<BsonDocument> live = db.getCollection("histories", BsonDocument.class);
        History history = HistoryTest.fromTheStart(db.getCollection("histories_history", BsonDocument.class), live,
                Histories.ALL_TYPES, HistoryOptions.ofDefaults());
        RecordingApplier recording = history.recording(GuardedApplier.create(live, Histories.ALL_TYPES));
        PropertyCheck.forAll("recorded then applied: 10..60 ops + 20% duplicates, batches of 1..20, 8 threads", 40,
                random -> Histories.stepsOfAllTypes(random, 10, 60, 3)).check((steps, trySeed) -> {
            String prefix = "h" + PREFIXES.incrementAndGet() + "-";
            List<Operation> ops = Histories.operations(steps, prefix);
            Random random = new Random(trySeed);
            List<Operation> delivered = Histories.delivery(ops, 0.2, random);
            List<List<Operation>> batches = new ArrayList<>();
            for (int from = 0; from < delivered.size(); ) {
                int to = Math.min(delivered.size(), from + 1 + random.nextInt(20));
                batches.add(delivered.subList(from, to));
                from = to;
            }
            applyFrom(8, recording, batches);

            Map<String, List<Operation>> byEntity = new TreeMap<>();
            ops.forEach(op -> byEntity.computeIfAbsent(op.entity(), e -> new ArrayList<>()).add(op));
            Map<String, EntityState> stored = EntityState.readAll(live.find(in("_id", byEntity.keySet())),
                    Histories.ALL_TYPES);
            for (Map.Entry<String, List<Operation>> entity : byEntity.entrySet()) {
                List<Operation> upTo = new ArrayList<>();
                Versions versions = history.versions(entity.getKey());
                assertThat(versions.versions()).extracting(Version::op).containsExactlyElementsOf(entity.getValue());
                EntityState previous = History.empty(entity.getKey());
                for (int i = 0; i < entity.getValue().size(); i++) {
                    Operation op = entity.getValue().get(i);
                    upTo.add(op);
                    EntityState expected = ORACLE.replay(upTo).get(entity.getKey());
                    assertThat(history.asOf(entity.getKey(), op.seq()).value()).as("as of seq %d of %s", op.seq(), ops)
                            .contains(expected);
                    Version version = versions.versions().get(i);
                    assertThat(version.before()).isEqualTo(previous);
                    assertThat(version.after()).isEqualTo(expected);
                    assertThat(version.changed()).as("seq %d of %s changed the state", op.seq(), ops)
                            .isEqualTo(!expected.equals(previous));
                    if (changesAttributes(op, previous)) {
                        ATTRIBUTE_CHANGES.increment();
                        Operation.Add add = (Operation.Add) op;
                        assertThat(version.changed()).as("re-add of a live element at seq %d of %s", op.seq(), ops)
                                .isTrue();
                        assertThat(expected.live().get(add.field()).get(add.element()).attrs()).isEqualTo(add.attrs());
                    }
                    previous = expected;
                    STATES_CHECKED.increment();
                }
                assertThat(versions.current()).as("the last state is the live document").isEqualTo(stored.get(entity.getKey()));
            }
        });
    }

    /** True if {@code op} adds an element live in {@code before} at a lower seq, with other attributes. */
    private static boolean changesAttributes(Operation op, EntityState before) {
        if (!(op instanceof Operation.Add add) || !before.live().containsKey(add.field())) {
            return false;
        }
        EntityState.Element live = before.live().get(add.field()).get(add.element());
        return live != null && live.seq() < add.seq() && !live.attrs().equals(add.attrs());
    }

    /** Applies the batches from {@code threads} threads; a failed op is applied again on its own, as a consumer would. */
    private static void applyFrom(int threads, RecordingApplier recording, List<List<Operation>> batches) throws Exception {
        Workers.drain(threads, new ConcurrentLinkedQueue<>(batches), batch -> {
            for (BatchResult result : recording.applyAll(batch)) {
                if (result instanceof BatchResult.Failed failed) {
                    assertThat(failed.error()).isInstanceOf(TransientException.class);
                    RETRIES.increment();
                    applyAgain(recording, result.op());
                } else {
                    assertThat(result).isInstanceOf(BatchResult.Done.class);
                }
            }
        });
    }

    private static void applyAgain(RecordingApplier recording, Operation op) {
        for (int attempt = 1; ; attempt++) {
            try {
                recording.apply(op);
                return;
            } catch (TransientException e) {
                RETRIES.increment();
                if (attempt == 5) {
                    throw e;
                }
            }
        }
    }
}
