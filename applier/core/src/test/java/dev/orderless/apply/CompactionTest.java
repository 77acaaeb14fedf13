package dev.orderless.apply;

import static com.mongodb.client.model.Filters.eq;
import static dev.orderless.apply.Students.enroll;
import static dev.orderless.apply.Students.leave;
import static dev.orderless.apply.Students.rename;
import static dev.orderless.apply.Students.unenroll;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.mongodb.client.MongoCollection;
import com.mongodb.client.MongoDatabase;
import dev.orderless.InvalidConfigurationException;
import dev.orderless.oracle.ReferenceModel;
import dev.orderless.testing.ManualClock;
import dev.orderless.testing.MongoExtension;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import java.util.Random;
import org.bson.BsonDocument;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/** Tombstone compaction: bounded arrays, unchanged observable state, and an honest horizon. */
@ExtendWith(MongoExtension.class)
class CompactionTest {
    private static final Duration GRACE = Duration.ofHours(1);

    private final ManualClock clock = new ManualClock();
    private MongoCollection<BsonDocument> students;
    private GuardedApplier applier;
    private TombstoneCompactor compactor;

    @BeforeEach
    void setUp(MongoDatabase db) {
        students = Students.collection(db);
        ApplierOptions options = ApplierOptions.ofDefaults().withClock(clock);
        applier = GuardedApplier.create(students, Students.SCHEMA, options);
        compactor = TombstoneCompactor.create(students, Students.SCHEMA, GRACE, options);
    }

    @Test
    void tombstones_younger_than_the_grace_period_stay() {
        applier.apply(unenroll("s1", 2, "CS 101"));
        clock.advance(GRACE.minusMinutes(1));

        assertThat(compactor.compactAll()).isEqualTo(new TombstoneCompactor.Compaction(0, 0));
        assertThat(stored("s1").getArray("deleted_classes")).hasSize(1);
    }

    @Test
    void a_foreign_document_is_skipped_and_the_pass_goes_on() {
        students.insertOne(new BsonDocument("_id", new org.bson.BsonString("a-foreign"))
                .append("_v", new org.bson.BsonString("x"))
                .append("deleted_classes", new org.bson.BsonArray(List.of(new BsonDocument("name",
                        new org.bson.BsonString("CS 101")).append("seq", new org.bson.BsonInt64(1))))));
        applier.apply(unenroll("s1", 2, "CS 101"));
        clock.advance(GRACE.plusMinutes(1));

        assertThat(compactor.compactAll()).isEqualTo(new TombstoneCompactor.Compaction(1, 1));
        assertThat(stored("s1").getArray("deleted_classes")).isEmpty();
    }

    @Test
    void compaction_drops_old_tombstones_and_leaves_the_observable_state_unchanged() {
        List<Operation> history = new ArrayList<>();
        long seq = 0;
        for (String course : List.of("CS 101", "MA 201", "PH 301", "BI 110")) {
            history.add(enroll("s1", ++seq, course, "t" + seq));
            history.add(unenroll("s1", ++seq, course));
        }
        history.add(enroll("s1", ++seq, "CS 101"));
        history.add(rename("s1", ++seq, "Ada"));
        history.forEach(applier::apply);
        EntityState before = state("s1");
        clock.advance(GRACE.plusMinutes(1));

        TombstoneCompactor.Compaction done = compactor.compactAll();

        assertThat(done).isEqualTo(new TombstoneCompactor.Compaction(1, 3));
        assertThat(state("s1").withoutTombstones()).isEqualTo(before.withoutTombstones());
        assertThat(state("s1").withoutTombstones())
                .isEqualTo(new ReferenceModel(Students.SCHEMA).replay(history).get("s1").withoutTombstones());
        assertThat(stored("s1").getArray("deleted_classes")).isEmpty();
        assertThat(stored("s1").getNumber("_gcFloor").longValue()).isEqualTo(8);
    }

    @Test
    void tombstone_arrays_stay_bounded_under_churn_with_compaction() {
        Random random = new Random(42);
        long seq = 0;
        int maxTombstones = 0;
        for (int hour = 0; hour < 20; hour++) {
            for (int i = 0; i < 50; i++) {
                String course = "C" + random.nextInt(200);
                applier.apply(random.nextBoolean() ? enroll("s1", ++seq, course) : unenroll("s1", ++seq, course));
            }
            clock.advance(GRACE.plusMinutes(1));
            compactor.compact("s1");
            maxTombstones = Math.max(maxTombstones, stored("s1").getArray("deleted_classes").size());
        }

        // only the last hour's removals can still be there, never the 20 hours' worth
        assertThat(maxTombstones).isLessThanOrEqualTo(50);
        assertThat(stored("s1").getArray("deleted_classes")).isEmpty();
    }

    @Test
    void an_op_at_or_below_the_compaction_floor_whose_tombstone_is_gone_is_beyond_the_horizon() {
        applier.apply(enroll("s1", 10, "CS 101"));
        applier.apply(unenroll("s1", 20, "CS 101"));
        clock.advance(GRACE.plusMinutes(1));
        compactor.compact("s1");

        // the enroll of seq 15 was superseded by the remove of 20, but that tombstone is gone: cannot judge
        assertThat(applier.apply(enroll("s1", 15, "CS 101"))).isEqualTo(Outcome.BEYOND_HORIZON);
        assertThat(applier.apply(unenroll("s1", 5, "MA 201"))).isEqualTo(Outcome.BEYOND_HORIZON);
        assertThat(state("s1").live()).isEmpty();
    }

    @Test
    void above_the_compaction_floor_or_where_an_entry_remains_ops_are_judged_as_usual() {
        applier.apply(enroll("s1", 10, "CS 101"));
        applier.apply(unenroll("s1", 20, "CS 101"));
        applier.apply(enroll("s1", 30, "MA 201"));
        clock.advance(GRACE.plusMinutes(1));
        compactor.compact("s1");

        assertThat(applier.apply(enroll("s1", 25, "CS 101"))).isEqualTo(Outcome.APPLIED);
        assertThat(applier.apply(unenroll("s1", 15, "MA 201"))).isEqualTo(Outcome.SUPERSEDED);
        assertThat(state("s1").live().get("classes").keySet()).containsExactlyInAnyOrder("CS 101", "MA 201");
    }

    @Test
    void an_op_below_a_delete_stays_superseded_after_compaction() {
        applier.apply(enroll("s1", 10, "CS 101"));
        applier.apply(leave("s1", 20));
        clock.advance(GRACE.plusMinutes(1));
        compactor.compact("s1");

        assertThat(applier.apply(enroll("s1", 15, "MA 201"))).isEqualTo(Outcome.SUPERSEDED);
    }

    @Test
    void compaction_racing_with_applies_loses_nothing() throws Exception {
        long seq = 0;
        List<Operation> history = new ArrayList<>();
        for (int i = 0; i < 300; i++) {
            String course = "C" + (i % 30);
            history.add(i % 3 == 2 ? unenroll("s1", ++seq, course) : enroll("s1", ++seq, course));
        }
        clock.advance(GRACE.plusMinutes(1));
        Thread compacting = new Thread(() -> {
            for (int i = 0; i < 100; i++) {
                compactor.compact("s1");
            }
        });
        compacting.start();
        history.forEach(applier::apply);
        compacting.join(Duration.ofSeconds(60).toMillis());
        assertThat(compacting.isAlive()).isFalse();

        assertThat(state("s1").withoutTombstones())
                .isEqualTo(new ReferenceModel(Students.SCHEMA).replay(history).get("s1").withoutTombstones());
    }

    @Test
    void a_grace_period_that_is_not_positive_fails_at_start_up() {
        assertThatThrownBy(() -> TombstoneCompactor.create(students, Students.SCHEMA, Duration.ZERO,
                ApplierOptions.ofDefaults()))
                .isInstanceOf(InvalidConfigurationException.class)
                .hasMessageContaining("grace must be a positive duration");
    }

    private BsonDocument stored(String id) {
        return students.find(eq("_id", id)).first();
    }

    private EntityState state(String id) {
        return EntityState.of(stored(id), Students.SCHEMA);
    }

}
