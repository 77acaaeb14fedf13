package dev.orderless.compaction;

import static org.assertj.core.api.Assertions.assertThat;

import com.mongodb.client.MongoCollection;
import com.mongodb.client.MongoDatabase;
import dev.orderless.apply.ApplierOptions;
import dev.orderless.apply.GuardedApplier;
import dev.orderless.apply.Operation;
import dev.orderless.apply.TombstoneCompactor;
import dev.orderless.lease.Lease;
import dev.orderless.lease.LeaseOptions;
import dev.orderless.lease.LeaseProvider;
import dev.orderless.lease.MongoLeaseProvider;
import dev.orderless.oracle.Histories;
import dev.orderless.testing.ManualClock;
import dev.orderless.testing.MongoExtension;
import java.time.Duration;
import java.util.Optional;
import org.bson.BsonDocument;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/** Two processes, one collection: a compaction pass at most once per interval, whoever runs it. */
@ExtendWith(MongoExtension.class)
class CompactionScheduleTest {
    private static final Duration INTERVAL = Duration.ofHours(1);
    private static final Duration GRACE = Duration.ofMinutes(10);

    private final ManualClock clock = new ManualClock();
    private LeaseProvider leases;
    private CompactionSchedule a;
    private CompactionSchedule b;
    private GuardedApplier applier;

    @BeforeEach
    void setUp(MongoDatabase db) {
        MongoCollection<BsonDocument> entities = db.getCollection("entities", BsonDocument.class);
        ApplierOptions options = ApplierOptions.ofDefaults().withClock(clock);
        applier = GuardedApplier.create(entities, Histories.SCHEMA, options);
        leases = MongoLeaseProvider.create(db.getCollection("leases", BsonDocument.class),
                LeaseOptions.ofDefaults().withClock(clock));
        TombstoneCompactor compactor = TombstoneCompactor.create(entities, Histories.SCHEMA, GRACE, options);
        a = CompactionSchedule.create(compactor, leases, "entities", "a", INTERVAL, clock);
        b = CompactionSchedule.create(compactor, leases, "entities", "b", INTERVAL, clock);
    }

    @Test
    void a_pass_runs_once_per_interval_whichever_process_asks() {
        assertThat(a.runIfDue()).as("first ask: due").isPresent();
        assertThat(b.runIfDue()).as("the other process, at once: not due").isEmpty();

        clock.advance(INTERVAL.minusMinutes(1));
        assertThat(a.runIfDue()).isEmpty();
        assertThat(b.runIfDue()).isEmpty();

        clock.advance(Duration.ofMinutes(1));
        assertThat(b.runIfDue()).as("an interval after the last pass began").isPresent();
        assertThat(a.runIfDue()).isEmpty();
    }

    @Test
    void a_pass_drops_the_tombstones_older_than_the_grace() {
        applier.apply(Operation.add("s1", 1, "classes", "a"));
        applier.apply(Operation.remove("s1", 2, "classes", "a"));
        clock.advance(GRACE.plusMinutes(1));

        assertThat(a.runIfDue()).hasValueSatisfying(pass -> assertThat(pass.tombstonesDropped()).isEqualTo(1));
    }

    @Test
    void nothing_runs_while_another_process_holds_the_lease() {
        Optional<Lease> held = leases.tryAcquire("compaction:entities", "c");
        assertThat(held).isPresent();

        assertThat(a.runIfDue()).isEmpty();
        held.get().close();
        assertThat(a.runIfDue()).as("released: due, since no pass ever ran").isPresent();
    }
}
