package dev.orderless.apply;

import static com.mongodb.client.model.Filters.eq;
import static dev.orderless.apply.Students.enroll;
import static dev.orderless.apply.Students.leave;
import static dev.orderless.apply.Students.rename;
import static dev.orderless.apply.Students.unenroll;
import static org.assertj.core.api.Assertions.assertThat;

import com.mongodb.client.MongoCollection;
import com.mongodb.client.MongoDatabase;
import dev.orderless.testing.MongoExtension;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.bson.BsonArray;
import org.bson.BsonDocument;
import org.bson.BsonInt64;
import org.bson.BsonString;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

@ExtendWith(MongoExtension.class)
class GuardedApplierTest {
    private MongoCollection<BsonDocument> students;
    private GuardedApplier applier;
    private SimpleMeterRegistry meters;

    @BeforeEach
    void setUp(MongoDatabase db) {
        students = Students.collection(db);
        meters = new SimpleMeterRegistry();
        applier = GuardedApplier.create(students, Students.SCHEMA, ApplierOptions.ofDefaults().withMeters(meters));
    }

    @Test
    void the_first_add_creates_the_document_in_the_documented_layout() {
        assertThat(applier.apply(enroll("s1", 1001, "CS 101", "Intro"))).isEqualTo(Outcome.APPLIED);

        BsonDocument stored = stored("s1");
        assertThat(stored.keySet()).containsExactlyInAnyOrder("_id", "classes", "_v", "_floor", "_gcFloor");
        assertThat(stored.getArray("classes")).containsExactly(new BsonDocument("name", new BsonString("CS 101"))
                .append("seq", new BsonInt64(1001)).append("title", new BsonString("Intro")));
        assertThat(stored.getNumber("_v").longValue()).isEqualTo(1);
        assertThat(stored.getNumber("_floor").longValue()).isZero();
    }

    @Test
    void a_redelivered_add_is_a_duplicate_and_writes_nothing() {
        applier.apply(enroll("s1", 1001, "CS 101"));

        assertThat(applier.apply(enroll("s1", 1001, "CS 101"))).isEqualTo(Outcome.DUPLICATE);
        assertThat(stored("s1").getNumber("_v").longValue()).isEqualTo(1);
    }

    @Test
    void a_redelivered_remove_is_a_duplicate() {
        applier.apply(unenroll("s1", 5, "CS 101"));

        assertThat(applier.apply(unenroll("s1", 5, "CS 101"))).isEqualTo(Outcome.DUPLICATE);
    }

    @Test
    void an_add_older_than_a_remove_of_the_same_class_is_superseded() {
        applier.apply(unenroll("s1", 1002, "CS 101"));

        assertThat(applier.apply(enroll("s1", 1001, "CS 101"))).isEqualTo(Outcome.SUPERSEDED);
        assertThat(state("s1").live()).isEmpty();
    }

    @Test
    void a_later_remove_of_a_tombstoned_element_moves_its_tombstone_forward() {
        applier.apply(unenroll("s1", 3, "CS 101"));

        assertThat(applier.apply(unenroll("s1", 7, "CS 101"))).isEqualTo(Outcome.APPLIED);
        assertThat(applier.apply(enroll("s1", 5, "CS 101"))).isEqualTo(Outcome.SUPERSEDED);
        assertThat(state("s1").tombstones()).isEqualTo(java.util.Map.of("classes", java.util.Map.of("CS 101", 7L)));
    }

    @Test
    void a_different_add_with_an_applied_seq_is_a_seq_collision_and_the_first_stays() {
        applier.apply(enroll("s1", 4, "CS 101", "Intro"));

        assertThat(applier.apply(enroll("s1", 4, "CS 101", "Advanced"))).isEqualTo(Outcome.SEQ_COLLISION);
        assertThat(applier.apply(unenroll("s1", 4, "CS 101"))).isEqualTo(Outcome.SEQ_COLLISION);
        assertThat(state("s1").live().get("classes").get("CS 101").attrs().getString("title").getValue())
                .isEqualTo("Intro");
    }

    @Test
    void a_different_value_assigned_with_an_applied_seq_is_a_seq_collision() {
        applier.apply(rename("s1", 4, "Ada"));

        assertThat(applier.apply(rename("s1", 4, "Ada"))).isEqualTo(Outcome.DUPLICATE);
        assertThat(applier.apply(rename("s1", 4, "Grace"))).isEqualTo(Outcome.SEQ_COLLISION);
        assertThat(stored("s1").getString("name").getValue()).isEqualTo("Ada");
    }

    @Test
    void the_latest_assign_wins_whatever_the_arrival_order() {
        assertThat(applier.apply(rename("s1", 9, "Grace"))).isEqualTo(Outcome.APPLIED);
        assertThat(applier.apply(rename("s1", 4, "Ada"))).isEqualTo(Outcome.SUPERSEDED);

        assertThat(stored("s1").getString("name").getValue()).isEqualTo("Grace");
        assertThat(stored("s1").getDocument("_seq").getNumber("name").longValue()).isEqualTo(9);
    }

    @Test
    void a_delete_tombstones_older_elements_clears_older_registers_and_keeps_newer_ones() {
        applier.apply(enroll("s1", 1, "CS 101"));
        applier.apply(rename("s1", 2, "Ada"));
        applier.apply(enroll("s1", 9, "MA 201"));

        assertThat(applier.apply(leave("s1", 5))).isEqualTo(Outcome.APPLIED);

        BsonDocument stored = stored("s1");
        assertThat(stored.getNumber("_floor").longValue()).isEqualTo(5);
        assertThat(stored.containsKey("name")).isFalse();
        assertThat(names(stored.getArray("classes"))).containsExactly("MA 201");
        assertThat(names(stored.getArray("deleted_classes"))).containsExactly("CS 101");
        assertThat(stored.getArray("deleted_classes").get(0).asDocument().getNumber("seq").longValue()).isEqualTo(5);
    }

    @Test
    void operations_below_a_delete_are_superseded_and_above_it_apply() {
        applier.apply(leave("s1", 5));

        assertThat(applier.apply(enroll("s1", 4, "CS 101"))).isEqualTo(Outcome.SUPERSEDED);
        assertThat(applier.apply(rename("s1", 3, "Ada"))).isEqualTo(Outcome.SUPERSEDED);
        assertThat(applier.apply(leave("s1", 2))).isEqualTo(Outcome.SUPERSEDED);
        assertThat(applier.apply(enroll("s1", 6, "CS 101"))).isEqualTo(Outcome.APPLIED);
    }

    @Test
    void a_redelivered_delete_is_a_duplicate_and_an_op_with_its_seq_is_a_collision() {
        applier.apply(leave("s1", 5));

        assertThat(applier.apply(leave("s1", 5))).isEqualTo(Outcome.DUPLICATE);
        assertThat(applier.apply(enroll("s1", 5, "CS 101"))).isEqualTo(Outcome.SEQ_COLLISION);
    }

    @Test
    void a_delete_whose_seq_an_element_already_carries_is_a_collision() {
        applier.apply(enroll("s1", 5, "CS 101"));

        assertThat(applier.apply(leave("s1", 5))).isEqualTo(Outcome.SEQ_COLLISION);
        assertThat(stored("s1").getNumber("_floor").longValue()).isZero();
    }

    @Test
    void concurrent_first_writes_to_a_new_entity_all_apply() throws Exception {
        int threads = 8;
        for (int round = 0; round < 20; round++) {
            String student = "race-" + round;
            List<Callable<Outcome>> writes = new ArrayList<>();
            for (int i = 0; i < threads; i++) {
                int n = i;
                writes.add(() -> n % 2 == 0
                        ? applier.apply(enroll(student, n + 1, "C" + n))
                        : applier.apply(unenroll(student, n + 1, "C" + n)));
            }
            assertThat(runTogether(writes)).containsOnly(Outcome.APPLIED);
            assertThat(students.countDocuments(eq("_id", student))).isEqualTo(1);
            assertThat(state(student).live().get("classes")).hasSize(threads / 2);
            assertThat(state(student).tombstones().get("classes")).hasSize(threads / 2);
        }
    }

    @Test
    void every_outcome_is_counted() {
        applier.apply(enroll("s1", 2, "CS 101"));
        applier.apply(enroll("s1", 2, "CS 101"));
        applier.apply(enroll("s1", 1, "CS 101"));

        assertThat(count(Outcome.APPLIED)).isEqualTo(1);
        assertThat(count(Outcome.DUPLICATE)).isEqualTo(1);
        assertThat(count(Outcome.SUPERSEDED)).isEqualTo(1);
        assertThat(count(Outcome.SEQ_COLLISION)).isZero();
    }

    private double count(Outcome outcome) {
        return meters.get("orderless.apply.outcomes").tag("outcome", outcome.tag()).counter().count();
    }

    private List<Outcome> runTogether(List<Callable<Outcome>> writes) throws Exception {
        ExecutorService pool = Executors.newFixedThreadPool(writes.size());
        CountDownLatch start = new CountDownLatch(1);
        try {
            List<Future<Outcome>> futures = new ArrayList<>();
            for (Callable<Outcome> write : writes) {
                futures.add(pool.submit(() -> {
                    start.await();
                    return write.call();
                }));
            }
            start.countDown();
            List<Outcome> outcomes = new ArrayList<>();
            for (Future<Outcome> f : futures) {
                outcomes.add(f.get(30, TimeUnit.SECONDS));
            }
            return outcomes;
        } finally {
            pool.shutdownNow();
        }
    }

    private BsonDocument stored(String id) {
        return students.find(eq("_id", id)).first();
    }

    private EntityState state(String id) {
        return EntityState.of(stored(id), Students.SCHEMA);
    }

    private static List<String> names(BsonArray entries) {
        return entries.stream().map(v -> v.asDocument().getString("name").getValue()).toList();
    }
}
