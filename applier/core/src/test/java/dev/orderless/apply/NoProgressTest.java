package dev.orderless.apply;

import static com.mongodb.client.model.Filters.eq;
import static dev.orderless.apply.Students.enroll;
import static dev.orderless.apply.Students.leave;
import static dev.orderless.apply.Students.rename;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeFalse;

import com.mongodb.client.MongoCollection;
import com.mongodb.client.MongoDatabase;
import com.mongodb.client.model.Collation;
import com.mongodb.client.model.CollationStrength;
import com.mongodb.client.model.CreateCollectionOptions;
import com.mongodb.client.model.IndexOptions;
import com.mongodb.client.model.Indexes;
import dev.orderless.CannotApplyException;
import dev.orderless.InvalidConfigurationException;
import dev.orderless.backends.KnownDifference;
import dev.orderless.backends.MongoBackend;
import dev.orderless.testing.MongoExtension;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.util.List;
import org.bson.BsonArray;
import org.bson.BsonDocument;
import org.bson.BsonDouble;
import org.bson.BsonInt64;
import org.bson.BsonString;
import org.bson.BsonValue;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * When MongoDB and the applier disagree about a document, the apply ends at once with a named,
 * non-transient failure instead of retrying: every case here used to loop until maxAttempts and then be
 * retried by the consumer forever.
 */
@ExtendWith(MongoExtension.class)
class NoProgressTest {
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
    void a_unique_secondary_index_refusing_a_first_write_is_no_progress_naming_the_index() {
        students.createIndex(Indexes.ascending("name"), new IndexOptions().unique(true));
        applier.apply(rename("s1", 1, "Ada"));

        assertNoProgress(() -> applier.apply(rename("s2", 1, "Ada")), "unique index 'name_1'");
        assertThat(students.countDocuments(eq("_id", "s2"))).isZero();
    }

    @Test
    void a_unique_secondary_index_refusing_a_write_to_an_existing_document_is_no_progress() {
        students.createIndex(Indexes.ascending("name"), new IndexOptions().unique(true));
        applier.apply(rename("s1", 1, "Ada"));
        applier.apply(rename("s2", 1, "Bea"));

        assertNoProgress(() -> applier.apply(rename("s2", 2, "Ada")), "unique index 'name_1'");
        assertThat(stored("s2").getString("name").getValue()).isEqualTo("Bea");
    }

    @Test
    void an_entry_whose_stored_seq_is_an_array_stops_the_refresh_at_once_not_after_max_attempts() {
        students.insertOne(new BsonDocument("_id", new BsonString("s1")).append("_v", new BsonInt64(1))
                .append("classes", new BsonArray(List.of(new BsonDocument("name", new BsonString("CS 101"))
                        .append("seq", new BsonArray(List.of(new BsonInt64(100))))))));

        assertNoProgress(() -> applier.apply(enroll("s1", 9, "CS 101")), "refresh write on students 's1' seq 9");
        assertThat(meters.get("orderless.apply.retries").counter().count()).as("the move and the refresh failed once each").isEqualTo(2);
    }

    @Test
    void a_version_of_another_type_stops_a_delete_and_says_so() {
        students.insertOne(new BsonDocument("_id", new BsonString("s1")).append("_v", new BsonString("x")));

        assertNoProgress(() -> applier.apply(leave("s1", 5)), "delete write on students 's1' seq 5");
    }

    @Test
    void a_set_stored_as_a_string_is_no_progress_naming_the_field() {
        students.insertOne(new BsonDocument("_id", new BsonString("s1")).append("classes", new BsonString("oops")));

        assertNoProgress(() -> applier.apply(enroll("s1", 3, "CS 101")), "'classes' is a string, not an array");
    }

    @Test
    void a_set_entry_without_its_key_is_no_progress_naming_it() {
        students.insertOne(new BsonDocument("_id", new BsonString("s1")).append("_v", new BsonInt64(1))
                .append("classes", new BsonArray(List.of(new BsonDocument("seq", new BsonInt64(1))))));

        assertNoProgress(() -> applier.apply(leave("s1", 5)), "'classes' entry 0 has no key 'name'");
    }

    @Test
    void a_value_the_driver_will_not_send_is_too_large_and_nothing_is_written() {
        BsonValue huge = new BsonString("x".repeat(17 * 1024 * 1024));

        assertThatThrownBy(() -> applier.apply(Operation.assign("s1", 1, "name", huge)))
                .isInstanceOfSatisfying(CannotApplyException.class,
                        e -> assertThat(e.kind()).isEqualTo(CannotApplyException.Kind.TOO_LARGE));
        assertThat(students.countDocuments()).isZero();
        assertThat(meters.get("orderless.apply.refused").tag("kind", "too_large").counter().count()).isEqualTo(1);
    }

    @Test
    void a_document_near_16_mb_can_still_be_deleted_because_only_what_changes_is_sent() {
        BsonArray classes = new BsonArray();
        for (int i = 0; i < 1500; i++) {
            classes.add(new BsonDocument("name", new BsonString("course-" + i)).append("seq", new BsonInt64(i + 1))
                    .append("notes", new BsonString("n".repeat(10_000))));
        }
        students.insertOne(new BsonDocument("_id", new BsonString("s1")).append("_v", new BsonInt64(1500))
                .append("classes", classes));

        assertThat(applier.apply(leave("s1", 2000))).isEqualTo(Outcome.APPLIED);
        BsonDocument stored = stored("s1");
        assertThat(stored.getArray("classes")).isEmpty();
        assertThat(stored.getArray("deleted_classes")).hasSize(1500);
    }

    @Test
    void a_delete_of_seventy_thousand_small_entries_sends_no_key_list_and_applies() {
        BsonArray classes = new BsonArray();
        for (int i = 0; i < 70_000; i++) {
            classes.add(new BsonDocument("name", new BsonString(String.format("%0100d", i))).append("seq", new BsonInt64(i + 1)));
        }
        students.insertOne(new BsonDocument("_id", new BsonString("s1")).append("_v", new BsonInt64(70_000))
                .append("classes", classes));

        assertThat(applier.apply(leave("s1", 80_000))).isEqualTo(Outcome.APPLIED);
        BsonDocument stored = stored("s1");
        assertThat(stored.getArray("classes")).isEmpty();
        assertThat(stored.getArray("deleted_classes")).hasSize(70_000);
    }

    @Test
    void a_delete_tombstones_exactly_the_entries_the_server_pulls_whatever_their_seq_type() {
        BsonDocument arraySeqHigh = new BsonDocument("name", new BsonString("A")).append("seq",
                new BsonArray(List.of(new BsonInt64(1), new BsonInt64(9))));
        BsonDocument doubleSeqHigh = new BsonDocument("name", new BsonString("D")).append("seq", new BsonDouble(7.5));
        students.insertOne(new BsonDocument("_id", new BsonString("s1")).append("_v", new BsonInt64(4))
                .append("classes", new BsonArray(List.of(arraySeqHigh,
                        new BsonDocument("name", new BsonString("B")).append("seq",
                                new BsonArray(List.of(new BsonInt64(1), new BsonInt64(2)))),
                        new BsonDocument("name", new BsonString("C")).append("seq", new BsonString("9")),
                        doubleSeqHigh,
                        new BsonDocument("name", new BsonString("E"))))));

        assertThat(applier.apply(leave("s1", 5))).isEqualTo(Outcome.APPLIED);
        BsonDocument stored = stored("s1");
        assertThat(stored.getArray("classes")).containsExactly(arraySeqHigh, doubleSeqHigh);
        assertThat(stored.getArray("deleted_classes")).extracting(t -> t.asDocument().getString("name").getValue())
                .containsExactly("B", "C", "E");
    }

    @Test
    void a_collection_with_a_case_insensitive_default_collation_is_refused_at_create(MongoDatabase db, MongoBackend backend) {
        assumeFalse(backend.knownDifferences().contains(KnownDifference.NO_COLLATION), "this backend has no collations");
        db.createCollection("folded", new CreateCollectionOptions().collation(
                Collation.builder().locale("en").collationStrength(CollationStrength.SECONDARY).build()));

        assertThatThrownBy(() -> GuardedApplier.create(db.getCollection("folded", BsonDocument.class), Students.SCHEMA))
                .isInstanceOf(InvalidConfigurationException.class)
                .hasMessageContaining("has the default collation")
                .hasMessageContaining("without a collation");
    }

    @Test
    void the_write_probe_says_whether_mongodb_accepts_writes_and_writes_nothing() {
        assertThat(applier.answersWrites()).isTrue();
        assertThat(students.countDocuments()).isZero();
    }

    @Test
    void a_codec_registry_that_cannot_encode_the_queries_is_refused_at_create() {
        MongoCollection<BsonDocument> bare = students.withCodecRegistry(
                org.bson.codecs.configuration.CodecRegistries.fromProviders(new org.bson.codecs.BsonValueCodecProvider()));

        assertThatThrownBy(() -> GuardedApplier.create(bare, Students.SCHEMA))
                .isInstanceOf(InvalidConfigurationException.class)
                .hasMessageContaining("codec registry").hasMessageContaining("ValueCodecProvider");
    }

    private void assertNoProgress(org.assertj.core.api.ThrowableAssert.ThrowingCallable apply, String expected) {
        assertThatThrownBy(apply).isInstanceOfSatisfying(CannotApplyException.class, e -> {
            assertThat(e.kind()).isEqualTo(CannotApplyException.Kind.NO_PROGRESS);
            assertThat(e.reason()).startsWith("no progress: ").contains(expected);
        });
        assertThat(meters.get("orderless.apply.refused").tag("kind", "no_progress").counter().count()).isEqualTo(1);
    }

    private BsonDocument stored(String id) {
        return students.find(eq("_id", id)).first();
    }
}
