package dev.orderless.testing.chaos;

import com.mongodb.client.MongoCollection;
import dev.orderless.apply.EntityState;
import dev.orderless.apply.GuardedApplier;
import dev.orderless.apply.Operation;
import dev.orderless.lease.LeaseOptions;
import dev.orderless.lease.MongoLeaseProvider;
import dev.orderless.view.FeederOptions;
import dev.orderless.view.ViewFeeder;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.bson.BsonDocument;
import org.bson.BsonInt64;
import org.bson.BsonValue;

/**
 * A run's view: a feeder of the run's own from the start (on the run's direct connection: the faults are the
 * consumers'), and at the end a bounded wait until every view document holds what the projection of the final
 * source documents gives, or the view stopped changing. Closed by the run (its feeder stops).
 */
final class ViewCheck {
    private static final Duration SETTLE = Duration.ofMinutes(1);
    private static final Duration QUIET = Duration.ofSeconds(3);

    private final Rig rig;
    private final String source;
    private final ChaosView view;
    private final ViewFeeder feeder;

    ViewCheck(Rig rig, String source, ChaosView view) {
        this.rig = rig;
        this.source = source;
        this.view = view;
        MongoCollection<BsonDocument> target = rig.database.getCollection(view.collection(), BsonDocument.class);
        LeaseOptions lease = LeaseOptions.ofDefaults().withTtl(Duration.ofSeconds(2), Duration.ofMillis(500));
        this.feeder = ViewFeeder.builder(rig.database, source, GuardedApplier.create(target, view.schema()),
                        view.projection(), MongoLeaseProvider.create(rig.database.getCollection(view.collection()
                                + "_leases", BsonDocument.class), lease))
                .options(FeederOptions.ofDefaults("view:" + view.collection()).withLease(lease)
                        .withPolling(Duration.ofMillis(50), Duration.ofMillis(100)))
                .start();
        rig.closing(feeder);
    }

    /**
     * How many view documents differ from the projection of the final documents, once the view settled: it equals
     * it, or stopped changing for {@link #QUIET} (a projection that diverges); bounded by {@link #SETTLE}.
     */
    long diverged() {
        long deadline = System.nanoTime() + SETTLE.toNanos();
        int last = 0;
        long since = System.nanoTime();
        long differing = differing();
        while (differing > 0 && System.nanoTime() - deadline < 0) {
            List<BsonDocument> docs = new ArrayList<>();
            rig.database.getCollection(view.collection(), BsonDocument.class).find().into(docs);
            if (docs.hashCode() != last) {
                last = docs.hashCode();
                since = System.nanoTime();
            } else if (System.nanoTime() - since > QUIET.toNanos()) {
                break;
            }
            java.util.concurrent.locks.LockSupport.parkNanos(Duration.ofMillis(100).toNanos());
            differing = differing();
        }
        feeder.close();
        return differing;
    }

    private long differing() {
        Map<String, Content> expected = expected();
        Map<String, Content> actual = new TreeMap<>();
        for (BsonDocument doc : rig.database.getCollection(view.collection(), BsonDocument.class).find()) {
            Content content;
            try {
                content = Content.of(EntityState.of(doc, view.schema()));
            } catch (RuntimeException unreadable) {
                content = new Content(Map.of("unreadable", Map.of()), Map.of(), Map.of());
            }
            if (!content.empty()) {
                BsonValue id = doc.get("_id");
                actual.put(id != null && id.isString() ? id.asString().getValue() : String.valueOf(id), content);
            }
        }
        java.util.Set<String> ids = new java.util.TreeSet<>(expected.keySet());
        ids.addAll(actual.keySet());
        return ids.stream().filter(id -> !java.util.Objects.equals(expected.get(id), actual.get(id))).count();
    }

    /**
     * The view the projection of every final source document gives. Not the reference model's replay: a view's
     * seqs are its sources' versions, so two sources' operations on one view document may share a seq; the guarded
     * apply judges each element (and register) by its own seq, and so does this: per element, the operation with
     * the highest seq; an add leaves it live, a remove not; per register, the highest assignment. A projection
     * that deletes view documents is judged likewise: everything of the document below the delete is gone.
     */
    private Map<String, Content> expected() {
        Map<String, Map<String, Operation>> last = new TreeMap<>();   // view id -> element or register -> op
        Map<String, Long> floors = new TreeMap<>();
        for (BsonDocument doc : rig.database.getCollection(source, BsonDocument.class).find()) {
            BsonValue version = doc.get("_v", new BsonInt64(0));
            for (Operation op : view.projection().project(doc, version.isNumber() ? version.asNumber().longValue() : 0)) {
                if (op instanceof Operation.Delete) {
                    floors.merge(op.entity(), op.seq(), Math::max);
                    continue;
                }
                String slot = op instanceof Operation.Add add ? "e:" + add.field() + '\u0000' + add.element()
                        : op instanceof Operation.Remove remove ? "e:" + remove.field() + '\u0000' + remove.element()
                        : op instanceof Operation.Assign assign ? "r:" + assign.field() : "c:" + op.seq();
                last.computeIfAbsent(op.entity(), e -> new TreeMap<>()).merge(slot, op,
                        (was, now) -> now.seq() > was.seq() ? now : was);
            }
        }
        Map<String, Content> expected = new TreeMap<>();
        last.forEach((id, slots) -> {
            long floor = floors.getOrDefault(id, 0L);
            Map<String, Map<String, BsonDocument>> live = new TreeMap<>();
            Map<String, BsonValue> registers = new TreeMap<>();
            for (Operation op : slots.values()) {
                if (op.seq() <= floor) {
                    continue;
                }
                if (op instanceof Operation.Add add) {
                    live.computeIfAbsent(add.field(), f -> new TreeMap<>()).put(add.element(), add.attrs());
                } else if (op instanceof Operation.Assign assign) {
                    registers.put(assign.field(), assign.value());
                }
            }
            Content content = new Content(live, registers, Map.of());
            if (!content.empty()) {
                expected.put(id, content);
            }
        });
        return expected;
    }

    /** What a view document holds, without how it got there (seqs, tombstones). */
    record Content(Map<String, Map<String, BsonDocument>> live, Map<String, BsonValue> registers,
                   Map<String, java.math.BigInteger> counters) {
        static Content of(EntityState state) {
            Map<String, Map<String, BsonDocument>> live = new TreeMap<>();
            state.live().forEach((field, elements) -> {
                Map<String, BsonDocument> attrs = new TreeMap<>();
                elements.forEach((element, e) -> attrs.put(element, e.attrs()));
                if (!attrs.isEmpty()) {
                    live.put(field, attrs);
                }
            });
            Map<String, BsonValue> registers = new TreeMap<>();
            state.registers().forEach((field, r) -> registers.put(field, r.value()));
            return new Content(live, registers, state.counters());
        }

        boolean empty() {
            return live.isEmpty() && registers.isEmpty() && counters.isEmpty();
        }
    }
}
