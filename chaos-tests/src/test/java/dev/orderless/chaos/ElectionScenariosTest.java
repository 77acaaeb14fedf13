package dev.orderless.chaos;

import static dev.orderless.chaos.Scenarios.progress;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.mongodb.MongoWriteException;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.MongoDatabase;
import com.mongodb.client.model.Filters;
import com.mongodb.client.model.UpdateOptions;
import com.mongodb.client.model.Updates;
import com.mongodb.client.result.UpdateResult;
import dev.orderless.Backoff;
import dev.orderless.TransientException;
import dev.orderless.amqp.ConsumerOptions;
import dev.orderless.amqp.OperationConsumer;
import dev.orderless.apply.ApplierOptions;
import dev.orderless.apply.EntityState;
import dev.orderless.apply.GuardedApplier;
import dev.orderless.apply.Operation;
import dev.orderless.apply.Outcome;
import dev.orderless.apply.TombstoneCompactor;
import dev.orderless.backends.MongoBackend;
import dev.orderless.backends.rabbit.RabbitBackend;
import dev.orderless.compaction.CompactionSchedule;
import dev.orderless.demo.Enrollment;
import dev.orderless.history.History;
import dev.orderless.history.Rebuild;
import dev.orderless.lease.Lease;
import dev.orderless.lease.LeaseOptions;
import dev.orderless.lease.MongoLeaseProvider;
import dev.orderless.oracle.ReferenceModel;
import dev.orderless.outbox.Outbox;
import dev.orderless.outbox.OutboxOptions;
import dev.orderless.outbox.OutboxRelay;
import dev.orderless.outbox.RelayOptions;
import dev.orderless.publish.ConfirmingPublisher;
import dev.orderless.publish.PublisherOptions;
import dev.orderless.testing.FailPoint;
import dev.orderless.testing.ManualClock;
import dev.orderless.testing.MongoExtension;
import dev.orderless.testing.rabbit.RabbitExtension;
import dev.orderless.view.ViewFeeder;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;
import org.awaitility.Awaitility;
import org.bson.BsonDocument;
import org.bson.BsonInt64;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.amqp.rabbit.connection.ConnectionFactory;

/**
 * MongoDB elections, as a replica set answers during one, injected at chosen commands with MongoDB's own
 * {@code failCommand} fail point ({@link FailPoint}): NotWritablePrimary (10107), PrimarySteppedDown (189) and
 * InterruptedDueToReplStateChange (11602) with the {@code RetryableWriteError} label; a write concern error (91) on a
 * write that was applied; a change stream's getMore failing with {@code ResumableChangeStreamError}; a lease whose
 * renewal fails, under the view feeder and on its own (its clock moved by hand: the holder stops before its lease can
 * pass, the fence rises, a stale write is refused); the outbox relay's claims and removals refused; and, the embedded
 * server's own fail point, a write applied whose connection closes before its reply (a bulk write, a single apply, an
 * outbox claim and removal). The embedded server says it is a standalone, so the driver retries no write: every error
 * reaches orderless. A replica set gets the driver's one retry of each refused write (the rig's clients keep
 * {@code retryWrites} on, as users do): a fault a step must see is armed always on, or for two commands.
 *
 * <p>Each fault is forced, not timed: armed for the rig's clients only ({@code appName}), awaited until it fired
 * ({@code waitForFailPoint}) and the component shows that it waits, then turned off. Each scenario then drains and
 * is judged by the oracle ({@link ChaosRig#verify}): converged ({@code diverged=0}), nothing lost ({@code lost=0}),
 * dead letters exactly the poison, the rosters view equal to the students; and it prints one line with the time from
 * the fault's end to the component's first success after it, and the waiting state seen meanwhile. On a MongoDB
 * without the fail points (no {@code enableTestCommands}), each is skipped with the server's reason.
 */
@ExtendWith({MongoExtension.class, RabbitExtension.class})
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
@org.junit.jupiter.api.Tag("failover")   // in CI's second invocation (-Pfailover), beside the cluster's: the budget
class ElectionScenariosTest {
    private static final int OPS = 600;
    private static final int STUDENTS = 80;
    private static final Duration FIRED = Duration.ofSeconds(30);
    private static final long SEED = Long.getLong("orderless.seed", System.nanoTime());
    private static final List<String> LINES = Collections.synchronizedList(new ArrayList<>());

    @AfterAll
    static void summary() {
        System.out.println();
        System.out.println("[election] MongoDB elections by fault injection (failCommand), seed " + SEED);
        LINES.forEach(line -> System.out.println("[election] " + line));
    }

    /** What a scenario's fault did: its description, the recovery time and the waiting state seen during it. */
    record Fault(String what, Duration recovery, String waiting) {
    }

    interface Body {
        Fault run(ChaosRig rig, List<Operation> ops) throws Exception;
    }

    @Test
    @Order(1)
    void consumers_come_through_three_elections_one_of_each_code(MongoBackend m, RabbitBackend r, ConnectionFactory cf,
                                                                 MongoDatabase db, MongoClient admin) {
        scenario("consumers, 3 elections", 1, m, r, cf, db, admin, FailPoint.FAIL_COMMAND, (rig, ops) -> {
            rig.startConsumer(2);
            rig.startConsumer(2);
            rig.startFeeder("feeder-a");
            Duration worst = Duration.ZERO;
            String waiting = "";
            int[] codes = {10107, 189, 11602};
            List<List<Operation>> slices = slices(ops, codes.length);
            for (int i = 0; i < codes.length; i++) {
                // armed before its messages are published: the election finds them in flight, whatever the timing
                try (FailPoint election = FailPoint.alwaysOn(admin, FailPoint.Data.failing("update")
                        .withError(codes[i], "RetryableWriteError").forApp(rig.appName).onNamespace(students(rig)))) {
                    rig.publish(slices.get(i), true, 0.1, 2);
                    election.awaitEntered(3, FIRED);
                    OperationConsumer waiter = awaitWaiting(rig);
                    waiting = waiter.waitingFor().orElse("");
                    assertThat(waiting).as("the consumer names MongoDB while it waits").startsWith("MongoDB");
                    Instant end = election.off();
                    worst = max(worst, recovery(end, () -> waiter.waitingFor().isEmpty()));
                }
            }
            return new Fault("update refused 10107, 189, 11602 (RetryableWriteError), each until waited", worst,
                    waiting);
        });
    }

    @Test
    @Order(2)
    void batch_consumers_absorb_a_bulk_write_applied_before_its_reply_was_lost(MongoBackend m, RabbitBackend r,
                                                                            ConnectionFactory cf, MongoDatabase db,
                                                                            MongoClient admin) {
        scenario("batch apply, reply lost", 2, m, r, cf, db, admin, FailPoint.CLOSE_AFTER, (rig, ops) -> {
            rig.startConsumer(2, o -> o.withBatch(50, Duration.ofMillis(100)));
            rig.startConsumer(2, o -> o.withBatch(50, Duration.ofMillis(100)));
            rig.startFeeder("feeder-a");
            List<List<Operation>> halves = slices(ops, 2);
            Instant end;
            int first;
            try (FailPoint lost = FailPoint.closeAfter(admin, 2, FailPoint.Data.failing("update")
                    .forApp(rig.appName).onNamespace(students(rig)))) {
                first = rig.publish(halves.get(0), true, 0, 2);   // no duplicates published: each counted is a retry
                lost.awaitEntered(2, FIRED);
                end = Instant.now();
            }
            double before = rig.handled();
            Duration recovery = recovery(end, () -> rig.handled() > before);
            progress(rig, first, 1.0);
            String waiting;
            Duration second;
            try (WaitWatcher watcher = new WaitWatcher(rig);
                 FailPoint concern = FailPoint.times(admin, 4, FailPoint.Data.failing("update")
                         .withWriteConcernError(91, "RetryableWriteError").forApp(rig.appName)
                         .onNamespace(students(rig)))) {
                rig.publish(halves.get(1), true, 0, 2);
                concern.awaitEntered(4, FIRED);   // four writes landed and were not acknowledged
                Instant over = Instant.now();
                double handled = rig.handled();
                second = recovery(over, () -> rig.handled() > handled);
                waiting = watcher.seen().orElse("none: each failed batch's ops settled by their own retry, as"
                        + " duplicates");
            }
            double absorbed = outcomes(rig, Outcome.DUPLICATE);
            assertThat(absorbed).as("the batches applied before their replies were lost came again as duplicates")
                    .isPositive();
            return new Fault("2 bulk writes applied, connection closed before the reply; 4 answered with write"
                    + " concern error 91; " + (long) absorbed + " ops absorbed as duplicates", max(recovery, second), waiting);
        });
    }

    /** {@code ops} in {@code n} consecutive slices, each entity's ops in one order still (the publish shuffles). */
    private static List<List<Operation>> slices(List<Operation> ops, int n) {
        List<List<Operation>> slices = new ArrayList<>();
        int size = (ops.size() + n - 1) / n;
        for (int i = 0; i < ops.size(); i += size) {
            slices.add(ops.subList(i, Math.min(ops.size(), i + size)));
        }
        return slices;
    }

    /**
     * The first waiting state any of the rig's consumers shows, polled every 2 ms from a thread of its own while a
     * fault lasts: a wait that a read ends within a retry's pause (a write concern error on a write that landed) is
     * seen if there was one, where a wait until the fault ends is awaited directly ({@link #awaitWaiting}).
     */
    private static final class WaitWatcher implements AutoCloseable {
        private final AtomicReference<String> seen = new AtomicReference<>();
        private final Thread thread;

        WaitWatcher(ChaosRig rig) {
            this(() -> {
                for (ChaosRig.Consumer c : new ArrayList<>(rig.consumers)) {
                    if (c.consumer() instanceof OperationConsumer consumer && consumer.waitingFor().isPresent()) {
                        return consumer.waitingFor();
                    }
                }
                return Optional.empty();
            });
        }

        /** Watches any component's waiting state or problem ({@code OutboxRelay::problem}). */
        WaitWatcher(Supplier<Optional<String>> waiting) {
            thread = new Thread(() -> {
                while (!Thread.currentThread().isInterrupted() && seen.get() == null) {
                    waiting.get().ifPresent(w -> seen.compareAndSet(null, w));
                    java.util.concurrent.locks.LockSupport.parkNanos(2_000_000);
                }
            }, "election-wait-watcher");
            thread.setDaemon(true);
            thread.start();
        }

        Optional<String> seen() {
            return Optional.ofNullable(seen.get());
        }

        @Override
        public void close() {
            thread.interrupt();
        }
    }

    @Test
    @Order(3)
    void the_view_feeder_resumes_a_change_stream_whose_get_more_failed_with_no_gap_and_no_double(
            MongoBackend m, RabbitBackend r, ConnectionFactory cf, MongoDatabase db, MongoClient admin) {
        scenario("view feeder, getMore resumable", 3, m, r, cf, db, admin, FailPoint.FAIL_COMMAND, (rig, ops) -> {
            rig.startConsumer(2);
            rig.startConsumer(2);
            ViewFeeder a = rig.startFeeder("feeder-a");
            Awaitility.await().atMost(FIRED).until(() -> a.state() == ViewFeeder.State.ACTIVE);
            rig.startFeeder("feeder-b");
            int messages = rig.publish(ops, true, 0.1, 0);
            progress(rig, messages, 0.3);
            Instant end;
            try (FailPoint election = FailPoint.times(admin, 3, FailPoint.Data.failing("getMore")
                    .withError(11602, "ResumableChangeStreamError").forApp(rig.appName).onNamespace(students(rig)))) {
                election.awaitEntered(3, FIRED);
                end = Instant.now();
            }
            // the first success after it: a student written now reaches its rosters
            Operation probe = Operation.add("election-probe", 1, Enrollment.CLASSES, "EL 1");
            GuardedApplier.create(rig.students, Enrollment.STUDENT_SCHEMA).apply(probe);
            ops.add(probe);
            MongoCollection<BsonDocument> rosters = rig.direct.getCollection(Enrollment.ROSTERS, BsonDocument.class);
            Duration recovery = recovery(end, () -> rosters.countDocuments(com.mongodb.client.model.Filters.eq("_id",
                    "EL 1")) > 0);
            return new Fault("3 getMores failed 11602 (ResumableChangeStreamError)", recovery,
                    "feeder " + a.state() + ", lag " + a.lag().map(Duration::toMillis).orElse(0L) + " ms");
        });
    }

    @Test
    @Order(4)
    void the_lease_renewal_failing_during_an_election_stops_the_feeder_and_fencing_holds(
            MongoBackend m, RabbitBackend r, ConnectionFactory cf, MongoDatabase db, MongoClient admin) {
        scenario("view feeder, lease renewal fails", 4, m, r, cf, db, admin, FailPoint.FAIL_COMMAND, (rig, ops) -> {
            rig.startConsumer(2);
            rig.startConsumer(2);
            ViewFeeder a = rig.startFeeder("feeder-a");
            Awaitility.await().atMost(FIRED).until(() -> a.state() == ViewFeeder.State.ACTIVE);
            ViewFeeder b = rig.startFeeder("feeder-b");
            long fenceBefore = a.fence().orElseThrow();
            int messages = rig.publish(ops, true, 0.1, 0);
            progress(rig, messages, 0.3);
            String waiting;
            Instant end;
            try (FailPoint election = FailPoint.alwaysOn(admin, FailPoint.Data.failing("update", "findAndModify")
                    .withError(189, "RetryableWriteError").forApp(rig.appName)
                    .onNamespace(rig.direct.getName() + ".leases"))) {
                election.awaitEntered(2, FIRED);
                // no renewal lands: the active feeder stops feeding before its lease can have passed to another
                Awaitility.await("the feeder stops under a lease it cannot renew").atMost(FIRED)
                        .until(() -> a.state() != ViewFeeder.State.ACTIVE && b.state() != ViewFeeder.State.ACTIVE);
                waiting = "feeder-a " + a.state() + ", feeder-b " + b.state();
                end = election.off();
            }
            Duration recovery = recovery(end, () -> a.state() == ViewFeeder.State.ACTIVE
                    || b.state() == ViewFeeder.State.ACTIVE);
            ViewFeeder active = a.state() == ViewFeeder.State.ACTIVE ? a : b;
            long fenceAfter = active.fence().orElseThrow();
            assertThat(fenceAfter).as("a new term, fenced above the old one").isGreaterThan(fenceBefore);
            return new Fault("lease update+findAndModify refused 189 until both stood by; fence " + fenceBefore + " -> "
                    + fenceAfter + " (" + (active == a ? "a again" : "handed to b") + ")", recovery, waiting);
        });
    }

    @Test
    @Order(5)
    void recording_consumers_come_through_an_election_that_refuses_the_history(MongoBackend m, RabbitBackend r,
                                                                              ConnectionFactory cf, MongoDatabase db,
                                                                              MongoClient admin) {
        scenario("history, record refused", 5, m, r, cf, db, admin, FailPoint.FAIL_COMMAND, (rig, ops) -> {
            rig.startFeeder("feeder-a");
            int messages = rig.publish(ops, true, 0.1, 2);
            rig.startRecordingConsumer(2);
            rig.startRecordingConsumer(2);
            progress(rig, messages, 0.3);
            String waiting;
            Duration recovery;
            String records = rig.direct.getName() + "." + History.collectionName(Enrollment.STUDENTS);
            try (FailPoint election = FailPoint.alwaysOn(admin, FailPoint.Data.failing("insert", "update")
                    .withError(10107, "RetryableWriteError").forApp(rig.appName).onNamespace(records))) {
                election.awaitEntered(3, FIRED);
                OperationConsumer waiter = awaitWaiting(rig);
                waiting = waiter.waitingFor().orElse("");
                Instant end = election.off();
                recovery = recovery(end, () -> waiter.waitingFor().isEmpty());
            }
            return new Fault("history insert+update refused 10107 until waited", recovery, waiting);
        }, (rig, ops, fault) -> {
            MongoCollection<BsonDocument> rebuilt = rig.direct.getCollection("students_rebuilt", BsonDocument.class);
            Rebuild rebuild = rig.history().rebuild(GuardedApplier.create(rebuilt, Enrollment.STUDENT_SCHEMA));
            assertThat(rebuild.complete()).as("%s", rebuild).isTrue();
            assertThat(ReferenceModel.diverged(EntityState.readAll(rig.students.find(), Enrollment.STUDENT_SCHEMA),
                    EntityState.readAll(rebuilt.find(), Enrollment.STUDENT_SCHEMA))).as("rebuilt = live").isEmpty();
            return new Fault(fault.what() + "; rebuilt = live", fault.recovery(), fault.waiting());
        });
    }

    @Test
    @Order(6)
    void compaction_comes_through_an_election_and_finishes_its_pass(MongoBackend m, RabbitBackend r,
                                                                   ConnectionFactory cf, MongoDatabase db,
                                                                   MongoClient admin) {
        scenario("compaction", 6, m, r, cf, db, admin, FailPoint.FAIL_COMMAND, (rig, ops) -> {
            rig.startConsumer(2);
            rig.startConsumer(2);
            rig.startFeeder("feeder-a");
            rig.publish(ops, true, 0.1, 0);
            return new Fault("", Duration.ZERO, "");
        }, (rig, ops, drained) -> {
            MongoCollection<BsonDocument> students = rig.proxied().getCollection(Enrollment.STUDENTS, BsonDocument.class);
            CompactionSchedule schedule = CompactionSchedule.create(TombstoneCompactor.create(students,
                            Enrollment.STUDENT_SCHEMA, Duration.ofMillis(1), ApplierOptions.ofDefaults()),
                    MongoLeaseProvider.create(rig.proxied().getCollection("leases", BsonDocument.class),
                            LeaseOptions.ofDefaults()), Enrollment.STUDENTS, "compactor", Duration.ofMillis(100),
                    Clock.systemUTC());
            String waiting;
            Instant end;
            try (FailPoint election = FailPoint.times(admin, 3, FailPoint.Data.failing("update", "findAndModify")
                    .withError(11602, "RetryableWriteError").forApp(rig.appName).onNamespace(students(rig)))) {
                TransientException refused = catchTransient(schedule::runIfDue);
                waiting = refused.getMessage().lines().findFirst().orElse("");
                end = election.off();
            }
            AtomicReference<TombstoneCompactor.Compaction> done = new AtomicReference<>();
            Duration recovery = recovery(end, () -> {
                try {
                    schedule.runIfDue().ifPresent(done::set);
                } catch (TransientException e) {
                    return false;
                }
                return done.get() != null;
            });
            Map<String, EntityState> expected = new TreeMap<>();
            new ReferenceModel(Enrollment.STUDENT_SCHEMA).replay(ops).forEach((k, v) -> expected.put(k,
                    v.withoutTombstones()));
            Map<String, EntityState> stored = new TreeMap<>();
            EntityState.readAll(rig.students.find(), Enrollment.STUDENT_SCHEMA).forEach((k, v) -> stored.put(k,
                    v.withoutTombstones()));
            assertThat(ReferenceModel.diverged(expected, stored)).as("diverged after compaction").isEmpty();
            return new Fault("after the drain, a pass refused 11602; the next dropped " + done.get().tombstonesDropped()
                    + " tombstones; compacted = oracle", recovery, waiting);
        });
    }

    @Test
    @Order(7)
    void the_outbox_relay_comes_through_three_elections_and_lost_replies_and_every_entry_is_published(
            MongoBackend m, RabbitBackend r, ConnectionFactory cf, MongoDatabase db, MongoClient admin) {
        scenario("outbox relay", 7, 400, m, r, cf, db, admin, FailPoint.FAIL_COMMAND, (rig, ops) -> {
            rig.startConsumer(2);
            rig.startConsumer(2);
            rig.startFeeder("feeder-a");
            MongoCollection<BsonDocument> entries = rig.direct.getCollection("outbox", BsonDocument.class);
            Operation[] next = new Operation[1];
            // the workload's own seqs (the web app's counter stamped them), recorded as the web app would
            Outbox outbox = Outbox.create(entries, entity -> next[0].seq(), OutboxOptions.ofDefaults());
            boolean replyLost = FailPoint.unavailable(admin, FailPoint.CLOSE_AFTER).isEmpty();
            List<List<Operation>> slices = slices(ops, replyLost ? 5 : 3);
            String namespace = rig.direct.getName() + ".outbox";
            record Election(int code, String... commands) {
            }
            // one refuses the claim, one the removal of what was published (so it is published again), one both
            List<Election> elections = List.of(new Election(10107, "update", "findAndModify"),
                    new Election(189, "delete"), new Election(11602, "update", "delete", "findAndModify"));
            Duration worst = Duration.ZERO;
            String waiting = "";
            // the default claim ttl (1 min): a claim whose reply was lost must not hold its entries that long
            try (OutboxRelay relay = OutboxRelay.start(rig.proxied().getCollection("outbox", BsonDocument.class),
                    ConfirmingPublisher.toQueue(cf, rig.queue, PublisherOptions.ofDefaults()),
                    RelayOptions.ofDefaults().withBatch(50).withOwner("relay-a").withMeters(rig.meters)
                            .withBackoff(Backoff.of(Duration.ofMillis(50), Duration.ofMillis(200))))) {
                for (int i = 0; i < elections.size(); i++) {
                    Election e = elections.get(i);
                    try (FailPoint election = FailPoint.alwaysOn(admin, FailPoint.Data.failing(e.commands())
                            .withError(e.code(), "RetryableWriteError").forApp(rig.appName).onNamespace(namespace))) {
                        record(outbox, next, slices.get(i));
                        election.awaitEntered(2, FIRED);
                        Awaitility.await("the relay shows that it backs off, and why").atMost(FIRED)
                                .pollInterval(Duration.ofMillis(10)).until(() -> relay.state()
                                        == OutboxRelay.State.BACKING_OFF && relay.problem().isPresent());
                        waiting = relay.problem().orElse("");
                        assertThat(waiting).as("the relay names MongoDB while it backs off").startsWith("MongoDB");
                        long before = relay.published();
                        Instant end = election.off();
                        worst = max(worst, recovery(end, () -> relay.published() > before));
                    }
                }
                String lostSeen = "";
                for (int i = elections.size(); i < slices.size(); i++) {
                    // the claim landed, then the removal of a published batch landed: each reply lost
                    String command = i == elections.size() ? "update" : "delete";
                    Instant end;
                    try (WaitWatcher watcher = new WaitWatcher(relay::problem);
                         FailPoint lost = FailPoint.closeAfter(admin, 1, FailPoint.Data.failing(command)
                                 .forApp(rig.appName).onNamespace(namespace))) {
                        record(outbox, next, slices.get(i));
                        lost.awaitEntered(1, FIRED);
                        end = Instant.now();
                        worst = max(worst, recovery(end, () -> entries.countDocuments() == 0));
                        lostSeen = watcher.seen().orElse(lostSeen);
                    }
                }
                Awaitility.await("every entry published and removed").atMost(Duration.ofSeconds(60))
                        .until(() -> entries.countDocuments() == 0);
                assertThat(outbox.parked().count()).as("parked: an election is nobody's fault").isZero();
                rig.publishedAround(ops.size());
                return new Fault("outbox claim refused 10107, removal refused 189 (published again), both 11602"
                        + (replyLost ? "; a claim and a removal applied, replies lost" : "; (no reply-lost fail point"
                        + " on this server)") + "; " + relay.published() + " entries removed after their confirms",
                        worst, brief(waiting) + (lostSeen.isEmpty() ? "" : " | reply lost: " + brief(lostSeen)));
            }
        }, (rig, ops, fault) -> {
            assertThat(rig.handled()).as("every recorded entry reached the consumers").isGreaterThanOrEqualTo(ops.size());
            return new Fault(fault.what() + "; " + (long) outcomes(rig, Outcome.DUPLICATE) + " duplicates absorbed",
                    fault.recovery(), fault.waiting());
        });
    }

    private static void record(Outbox outbox, Operation[] next, List<Operation> ops) {
        for (Operation op : ops) {
            next[0] = op;
            outbox.record(op.entity(), seq -> op);
        }
    }

    @Test
    @Order(8)
    void a_lease_whose_renewal_and_acquire_an_election_refuses_stops_its_holder_in_time_and_fencing_holds(
            MongoBackend m, RabbitBackend r, ConnectionFactory cf, MongoDatabase db, MongoClient admin) {
        scenario("lease alone, renew+acquire refused", 8, 200, m, r, cf, db, admin, FailPoint.FAIL_COMMAND, (rig, ops) -> {
            rig.startConsumer(2);
            rig.startConsumer(2);
            rig.startFeeder("feeder-a");
            rig.publish(ops, true, 0.1, 0);   // the consumers and the view go on beside the lease's election
            // time moves by hand: the renewer runs every 500 ms of real time, expiry is the manual clock's
            ManualClock clock = new ManualClock();
            Duration ttl = Duration.ofSeconds(30);
            Duration renew = Duration.ofMillis(500);
            MongoLeaseProvider leases = MongoLeaseProvider.create(rig.proxied().getCollection("fenced_leases",
                    BsonDocument.class), LeaseOptions.ofDefaults().withTtl(ttl, renew).withClock(clock));
            MongoCollection<BsonDocument> work = rig.proxied().getCollection("fenced_work", BsonDocument.class);
            Lease a = leases.tryAcquire("election", "holder-a").orElseThrow();
            assertThat(fencedWrite(work, a)).as("the holder's first write").isTrue();
            String namespace = rig.direct.getName() + ".fenced_leases";
            String waiting;
            Instant end;
            try (FailPoint election = FailPoint.alwaysOn(admin, FailPoint.Data.failing("update", "findAndModify")
                    .withError(189, "RetryableWriteError").forApp(rig.appName).onNamespace(namespace))) {
                election.awaitEntered(1, FIRED);   // a renewal refused
                TransientException refused = catchTransient(() -> leases.tryAcquire("election", "holder-b"));
                // the last renewal that landed was at the start: the stored expiry is start + ttl, and the holder
                // stops one renewal period before it
                clock.advance(ttl.minus(renew));
                assertThat(a.isHeld()).as("the holder stops acting as owner before its lease can pass").isFalse();
                waiting = "holder-a held=" + a.isHeld() + "; holder-b: " + refused.getMessage().lines().findFirst()
                        .orElse("");
                end = election.off();
            }
            assertThat(leases.tryAcquire("election", "holder-b")).as("not before the stored expiry").isEmpty();
            clock.advance(renew);
            // two: on a replica set the driver retries the refused findAndModify once (retryWrites), and both fail
            try (FailPoint second = FailPoint.times(admin, 2, FailPoint.Data.failing("findAndModify")
                    .withError(10107, "RetryableWriteError").forApp(rig.appName).onNamespace(namespace))) {
                catchTransient(() -> leases.tryAcquire("election", "holder-b"));
                second.awaitEntered(1, FIRED);
            }
            AtomicReference<Lease> b = new AtomicReference<>();
            Duration recovery = recovery(end, () -> {
                try {
                    leases.tryAcquire("election", "holder-b").ifPresent(b::set);
                } catch (TransientException e) {
                    return false;
                }
                return b.get() != null;
            });
            assertThat(b.get().fence()).as("a new owner, a higher fence").isGreaterThan(a.fence());
            assertThat(fencedWrite(work, b.get())).as("the standby writes under its fence").isTrue();
            assertThat(fencedWrite(work, a)).as("a write under the stale fence").isFalse();
            assertThat(a.commit(new BsonDocument("late", new BsonInt64(1)))).as("the old holder's commit").isFalse();
            BsonDocument written = work.find().first();
            assertThat(written.getInt64("fence").getValue()).isEqualTo(b.get().fence());
            assertThat(written.getArray("fences").stream().map(v -> v.asInt64().getValue()).toList())
                    .as("fences written, in order").isSorted().containsExactly(a.fence(), b.get().fence());
            b.get().close();
            a.close();
            return new Fault("lease renewal and acquire refused 189, the takeover's first acquire 10107; fence "
                    + a.fence() + " -> " + b.get().fence() + ", the stale write refused", recovery, waiting);
        });
    }

    /**
     * The work a lease guards, written only under a fence at least the last one written: what a holder that lost
     * its lease without knowing it cannot overwrite. True if it landed.
     */
    private static boolean fencedWrite(MongoCollection<BsonDocument> work, Lease lease) {
        try {
            UpdateResult written = work.updateOne(Filters.and(Filters.eq("_id", lease.resource()),
                            Filters.lte("fence", lease.fence())),
                    Updates.combine(Updates.set("fence", lease.fence()), Updates.set("writer", lease.owner()),
                            Updates.push("fences", lease.fence())), new UpdateOptions().upsert(true));
            return written.getMatchedCount() > 0 || written.getUpsertedId() != null;
        } catch (MongoWriteException e) {
            if (e.getError().getCode() == 11000) {
                return false;   // the guard failed and the upsert met the document: a higher fence wrote it
            }
            throw e;
        }
    }

    @Test
    @Order(9)
    void one_message_at_a_time_consumers_absorb_an_apply_whose_reply_was_lost_as_a_duplicate(
            MongoBackend m, RabbitBackend r, ConnectionFactory cf, MongoDatabase db, MongoClient admin) {
        scenario("per message, reply lost", 9, 300, m, r, cf, db, admin, FailPoint.CLOSE_AFTER, (rig, ops) -> {
            rig.startConsumer(2, ConsumerOptions::perMessage);
            rig.startConsumer(2, ConsumerOptions::perMessage);
            rig.startFeeder("feeder-a");
            Instant end;
            String waiting;
            int messages;
            try (FailPoint lost = FailPoint.closeAfter(admin, 3, FailPoint.Data.failing("update")
                    .forApp(rig.appName).onNamespace(students(rig)))) {
                messages = rig.publish(ops, true, 0, 2);   // no duplicates published: each counted is a retry
                lost.awaitEntered(3, FIRED);
                end = Instant.now();
                double before = rig.handled();
                Duration recovery = recovery(end, () -> rig.handled() > before);
                progress(rig, messages, 1.0);
                // one closed connection is not MongoDB down (no waitingFor): each message says it retries
                waiting = (long) rig.meters.find("orderless.consume.retried").counters().stream()
                        .mapToDouble(c -> c.count()).sum() + " retried (orderless.consume.retried), each a WARN"
                        + " 'not applied, retry 1 after a pause: ... Prematurely reached end of stream'";
                double absorbed = outcomes(rig, Outcome.DUPLICATE);
                assertThat(absorbed).as("the applies whose replies were lost came again as duplicates").isPositive();
                return new Fault("3 single applies ran, connection closed before the reply; " + (long) absorbed
                        + " absorbed as duplicates", recovery, waiting);
            }
        });
    }

    /** Checks after the verdict, for a scenario with more to prove; returns the fault to report. */
    interface After {
        Fault check(ChaosRig rig, List<Operation> ops, Fault fault) throws Exception;
    }

    private void scenario(String name, int index, MongoBackend m, RabbitBackend r, ConnectionFactory cf,
                          MongoDatabase db, MongoClient admin, String failPoint, Body body) {
        scenario(name, index, m, r, cf, db, admin, failPoint, body, (rig, ops, fault) -> fault);
    }

    private void scenario(String name, int index, MongoBackend m, RabbitBackend r, ConnectionFactory cf,
                          MongoDatabase db, MongoClient admin, String failPoint, Body body, After after) {
        scenario(name, index, OPS, m, r, cf, db, admin, failPoint, body, after);
    }

    /** A scenario whose fault needs fewer operations around it than {@link #OPS} (the class keeps within budget). */
    private void scenario(String name, int index, int opCount, MongoBackend m, RabbitBackend r, ConnectionFactory cf,
                          MongoDatabase db, MongoClient admin, String failPoint, Body body) {
        scenario(name, index, opCount, m, r, cf, db, admin, failPoint, body, (rig, ops, fault) -> fault);
    }

    private void scenario(String name, int index, int opCount, MongoBackend m, RabbitBackend r, ConnectionFactory cf,
                          MongoDatabase db, MongoClient admin, String failPoint, Body body, After after) {
        Optional<String> unavailable = FailPoint.unavailable(admin, failPoint);
        if (unavailable.isPresent()) {
            LINES.add(String.format("%-34s skipped: %s", name, unavailable.get()));
            Assumptions.abort(unavailable.get());
        }
        long started = System.nanoTime();
        try (ChaosRig rig = new ChaosRig(m, r, cf, db, SEED + index)) {
            List<Operation> ops = new ArrayList<>(rig.workload(opCount, STUDENTS));
            Fault fault = body.run(rig, ops);
            rig.drain();
            ChaosRig.Verdict v = rig.verify(ops);
            Fault reported = v.diverged() == 0 && v.lost() == 0 ? after.check(rig, ops, fault) : fault;
            LINES.add(line(name, reported, v.diverged(), v.lost(), v.deadLettered(), v.poison(),
                    (System.nanoTime() - started) / 1_000_000));
            assertThat(v.creditsDiverged()).as("students whose credits differ from the oracle's sum").isZero();
            assertThat(v.diverged()).as("diverged").isZero();
            assertThat(v.lost()).as("lost").isZero();
            assertThat(v.deadLettered()).as("dead-lettered = poison injected").isEqualTo(v.poison());
        } catch (Throwable e) {
            LINES.add(String.format("%-34s FAILED: %s", name, e.getMessage() == null ? e
                    : e.getMessage().lines().findFirst().orElse("")));
            throw new AssertionError("election scenario '" + name + "' failed; replay it with -Dorderless.seed="
                    + SEED, e);
        }
    }

    private static String line(String name, Fault fault, long diverged, long lost, long deadLettered, int poison,
                               long millis) {
        return String.format("%-34s diverged=%d lost=%d dead-lettered=%d/%d poison recovery=%dms waiting=\"%s\""
                        + " fault: %s%s", name, diverged, lost, deadLettered, poison, fault.recovery().toMillis(),
                brief(fault.waiting()), fault.what(), String.format(" (%.1f s)", millis / 1000.0));
    }

    /** A waiting state up to the server's reply it quotes: the line stays readable. */
    private static String brief(String waiting) {
        int reply = waiting.indexOf(": 'Failing command");
        return reply < 0 ? waiting : waiting.substring(0, reply);
    }

    private static String students(ChaosRig rig) {
        return rig.direct.getName() + "." + Enrollment.STUDENTS;
    }

    /** The first of the rig's consumers seen waiting for MongoDB (bounded). */
    private static OperationConsumer awaitWaiting(ChaosRig rig) {
        AtomicReference<OperationConsumer> waiting = new AtomicReference<>();
        Awaitility.await("a consumer shows that it waits for MongoDB").atMost(FIRED).pollInterval(Duration.ofMillis(10))
                .until(() -> {
                    for (ChaosRig.Consumer c : new ArrayList<>(rig.consumers)) {
                        if (c.consumer() instanceof OperationConsumer consumer && consumer.waitingFor().isPresent()) {
                            waiting.set(consumer);
                            return true;
                        }
                    }
                    return false;
                });
        return waiting.get();
    }

    /** From the fault's end to the first success after it (bounded). */
    private static Duration recovery(Instant end, BooleanSupplier recovered) {
        Awaitility.await("the first success after the fault").atMost(Duration.ofSeconds(60))
                .pollInterval(Duration.ofMillis(5)).until(recovered::getAsBoolean);
        return Duration.between(end, Instant.now());
    }

    private static TransientException catchTransient(Supplier<?> action) {
        AtomicReference<TransientException> caught = new AtomicReference<>();
        assertThatThrownBy(action::get).isInstanceOfSatisfying(TransientException.class, caught::set);
        return caught.get();
    }

    private static double outcomes(ChaosRig rig, Outcome outcome) {
        return rig.meters.find("orderless.consume.outcomes").tag("outcome", outcome.tag()).counters().stream()
                .mapToDouble(c -> c.count()).sum();
    }

    private static Duration max(Duration a, Duration b) {
        return a.compareTo(b) >= 0 ? a : b;
    }
}
