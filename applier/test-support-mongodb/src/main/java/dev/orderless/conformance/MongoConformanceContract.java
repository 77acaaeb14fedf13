package dev.orderless.conformance;

import static com.mongodb.client.model.Filters.and;
import static com.mongodb.client.model.Filters.elemMatch;
import static com.mongodb.client.model.Filters.eq;
import static com.mongodb.client.model.Filters.exists;
import static com.mongodb.client.model.Filters.gte;
import static com.mongodb.client.model.Filters.lt;
import static com.mongodb.client.model.Filters.ne;
import static com.mongodb.client.model.Filters.not;
import static com.mongodb.client.model.Filters.or;
import static com.mongodb.client.model.Updates.combine;
import static com.mongodb.client.model.Updates.inc;
import static com.mongodb.client.model.Updates.pullByFilter;
import static com.mongodb.client.model.Updates.push;
import static com.mongodb.client.model.Updates.set;
import static com.mongodb.client.model.Updates.setOnInsert;
import static com.mongodb.client.model.Updates.unset;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.mongodb.ErrorCategory;
import com.mongodb.MongoBulkWriteException;
import com.mongodb.MongoException;
import com.mongodb.MongoWriteException;
import com.mongodb.client.MongoChangeStreamCursor;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.MongoDatabase;
import com.mongodb.client.model.BulkWriteOptions;
import com.mongodb.client.model.UpdateOneModel;
import com.mongodb.client.model.UpdateOptions;
import com.mongodb.client.model.changestream.ChangeStreamDocument;
import com.mongodb.client.model.changestream.FullDocument;
import dev.orderless.backends.EmbeddedMongo;
import dev.orderless.backends.KnownDifference;
import dev.orderless.backends.MongoBackend;
import dev.orderless.testing.MongoExtension;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.awaitility.Awaitility;
import org.bson.BsonDateTime;
import org.bson.BsonDocument;
import org.bson.BsonInt64;
import org.bson.BsonString;
import org.bson.BsonValue;
import org.bson.Document;
import org.bson.conversions.Bson;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Every MongoDB behaviour orderless relies on, one test each, run against whatever backend is chosen
 * (embedded by default, {@code MONGODB_URI}, or {@code -Ptestcontainers}). Where a backend declares a
 * {@link KnownDifference}, the test pins the deviating behaviour instead, so the report says exactly
 * which behaviours differ, and a backend that stops differing fails the test until its declaration
 * is corrected.
 */
@ExtendWith(MongoExtension.class)
public abstract class MongoConformanceContract {
    private static final Set<String> DIFFERENCES_SEEN = ConcurrentHashMap.newKeySet();
    private static final AtomicReference<String> BACKEND = new AtomicReference<>("?");

    private MongoBackend backend;
    private MongoDatabase db;
    private MongoCollection<BsonDocument> docs;

    @BeforeEach
    void setUp(MongoBackend backend, MongoDatabase db) {
        this.backend = backend;
        this.db = db;
        BACKEND.set(backend.description());
        this.docs = db.getCollection("conformance", BsonDocument.class);
    }

    @AfterAll
    static void report() {
        System.out.println("[conformance] backend: " + BACKEND.get() + "; behaviours that differ from MongoDB: "
                + (DIFFERENCES_SEEN.isEmpty() ? "none" : new java.util.TreeSet<>(DIFFERENCES_SEEN)));
    }

    @Test
    void an_upsert_whose_guard_fails_on_an_existing_document_raises_duplicate_key_on_id() {
        docs.insertOne(doc("e1").append("v", new BsonInt64(5)));

        assertThatThrownBy(() -> docs.updateOne(and(eq("_id", "e1"), lt("v", 3L)), set("v", 3L),
                new UpdateOptions().upsert(true)))
                .isInstanceOfSatisfying(MongoWriteException.class, e -> assertThat(
                        ErrorCategory.fromErrorCode(e.getError().getCode())).isEqualTo(ErrorCategory.DUPLICATE_KEY));
        assertThat(docs.countDocuments()).isEqualTo(1);
    }

    @Test
    void an_unordered_bulk_of_guarded_upserts_reports_each_refused_guard_as_duplicate_key_on_its_index() {
        docs.insertOne(doc("e1").append("v", new BsonInt64(5)));
        docs.insertOne(doc("e2").append("v", new BsonInt64(1)));

        assertThatThrownBy(() -> docs.bulkWrite(List.of(
                new UpdateOneModel<>(and(eq("_id", "e1"), lt("v", 3L)), set("v", 3L), new UpdateOptions().upsert(true)),
                new UpdateOneModel<>(and(eq("_id", "e2"), lt("v", 3L)), set("v", 3L), new UpdateOptions().upsert(true)),
                new UpdateOneModel<>(and(eq("_id", "e3"), lt("v", 3L)), set("v", 3L), new UpdateOptions().upsert(true))),
                new BulkWriteOptions().ordered(false)))
                .isInstanceOfSatisfying(MongoBulkWriteException.class, e -> {
                    assertThat(e.getWriteErrors()).singleElement().satisfies(error -> {
                        assertThat(error.getIndex()).as("the refused guard, e1").isZero();
                        assertThat(ErrorCategory.fromErrorCode(error.getCode())).isEqualTo(ErrorCategory.DUPLICATE_KEY);
                    });
                    assertThat(e.getWriteResult().getUpserts()).singleElement()
                            .satisfies(upsert -> assertThat(upsert.getIndex()).as("e3, inserted").isEqualTo(2));
                    assertThat(e.getWriteResult().getMatchedCount()).as("e2, matched").isEqualTo(1);
                });
        assertThat(docs.find(eq("_id", "e1")).first().getInt64("v").getValue()).isEqualTo(5);
        assertThat(docs.find(eq("_id", "e2")).first().getInt64("v").getValue()).isEqualTo(3);
    }

    @Test
    void an_unordered_bulk_counts_the_plain_updates_that_matched_beside_its_upserts() {
        docs.insertOne(doc("e1").append("v", new BsonInt64(1)));
        docs.insertOne(doc("e2").append("v", new BsonInt64(9)));

        com.mongodb.bulk.BulkWriteResult result = docs.bulkWrite(List.of(
                new UpdateOneModel<>(and(eq("_id", "e1"), lt("v", 3L)), set("v", 3L)),                        // matches
                new UpdateOneModel<>(and(eq("_id", "e2"), lt("v", 3L)), set("v", 3L)),                        // does not
                new UpdateOneModel<>(and(eq("_id", "e3"), lt("v", 3L)), set("v", 3L), new UpdateOptions().upsert(true)),
                new UpdateOneModel<>(eq("_id", "e4"), set("v", 3L))),                                         // no document
                new BulkWriteOptions().ordered(false));

        assertThat(result.getMatchedCount()).as("e1 only; the inserted e3 is not a match").isEqualTo(1);
        assertThat(result.getUpserts()).singleElement().satisfies(upsert -> assertThat(upsert.getIndex()).isEqualTo(2));
    }

    @Test
    void not_elemMatch_matches_a_document_without_the_array() {
        docs.insertOne(doc("e1"));

        assertThat(docs.countDocuments(not(elemMatch("classes", eq("name", "CS 101"))))).isEqualTo(1);
    }

    @Test
    void not_elemMatch_does_not_match_when_an_entry_matches() {
        docs.insertOne(doc("e1").append("classes", entries(entry("CS 101", 3))));

        assertThat(docs.countDocuments(not(elemMatch("classes", and(eq("name", "CS 101"), gte("seq", 2L))))))
                .isZero();
        assertThat(docs.countDocuments(not(elemMatch("classes", and(eq("name", "CS 101"), gte("seq", 4L))))))
                .isEqualTo(1);
    }

    @Test
    void not_gte_matches_a_document_without_the_field() {
        docs.insertOne(doc("e1"));
        docs.insertOne(doc("e2").append("_floor", new BsonInt64(7)));

        assertThat(docs.find(not(gte("_floor", 5L))).map(d -> d.getString("_id").getValue()).into(new ArrayList<>()))
                .containsExactly("e1");
    }

    @Test
    void push_and_pull_on_the_same_array_in_one_update_are_refused() {
        docs.insertOne(doc("e1").append("classes", entries(entry("CS 101", 1))));

        assertThatThrownBy(() -> docs.updateOne(eq("_id", "e1"),
                combine(push("classes", entry("CS 101", 3)), pullByFilter(eq("classes", new BsonDocument("name",
                        new BsonString("CS 101")))))))
                .isInstanceOf(MongoException.class);
    }

    @Test
    void positional_set_after_elemMatch_replaces_the_matched_entry() {
        docs.insertOne(doc("e1").append("classes", entries(entry("MA 201", 2), entry("CS 101", 1))));

        long matched = docs.updateOne(and(eq("_id", "e1"), elemMatch("classes", and(eq("name", "CS 101"), lt("seq", 3L)))),
                set("classes.$", entry("CS 101", 3).append("title", new BsonString("Intro")))).getMatchedCount();

        assertThat(matched).isEqualTo(1);
        assertThat(docs.find().first().getArray("classes"))
                .containsExactly(entry("MA 201", 2), entry("CS 101", 3).append("title", new BsonString("Intro")));
    }

    @Test
    void pull_by_key_removes_the_entry_whatever_its_other_fields() {
        docs.insertOne(doc("e1").append("classes", entries(entry("CS 101", 1).append("title", new BsonString("x")),
                entry("MA 201", 2))));

        docs.updateOne(eq("_id", "e1"), pullByFilter(eq("classes", new BsonDocument("name", new BsonString("CS 101")))));

        assertThat(docs.find().first().getArray("classes")).containsExactly(entry("MA 201", 2));
    }

    @Test
    void an_upsert_takes_only_id_from_a_filter_of_not_elemMatch_and_or() {
        docs.updateOne(and(eq("_id", "e1"), not(gte("_floor", 5L)), not(elemMatch("classes", eq("name", "CS 101"))),
                        or(elemMatch("deleted_classes", eq("name", "CS 101")), not(gte("_gcFloor", 5L)))),
                combine(push("classes", entry("CS 101", 5)), pullByFilter(eq("deleted_classes",
                        new BsonDocument("name", new BsonString("CS 101")))), inc("_v", 1L)),
                new UpdateOptions().upsert(true));

        BsonDocument stored = docs.find().first();
        assertThat(stored.keySet()).containsExactlyInAnyOrder("_id", "classes", "_v");
        assertThat(stored.getArray("classes")).containsExactly(entry("CS 101", 5));
    }

    @Test
    void an_upsert_takes_only_id_from_the_move_guard_of_dotted_ne_elemMatch_and_or() {
        docs.updateOne(and(eq("_id", "e1"), not(gte("_floor", 5L)), ne("classes.name", "CS 101"),
                        not(elemMatch("deleted_classes", and(eq("name", "CS 101"), gte("seq", 5L)))),
                        or(not(gte("_gcFloor", 5L)), eq("deleted_classes.name", "CS 101"))),
                combine(push("classes", entry("CS 101", 5)), pullByFilter(eq("deleted_classes",
                        new BsonDocument("name", new BsonString("CS 101")))), inc("_v", 1L)),
                new UpdateOptions().upsert(true));

        BsonDocument stored = docs.find().first();
        assertThat(stored.keySet()).containsExactlyInAnyOrder("_id", "classes", "_v");
        assertThat(stored.getArray("classes")).containsExactly(entry("CS 101", 5));
    }

    @Test
    void ne_on_a_dotted_path_into_an_array_matches_only_when_no_entry_has_the_key() {
        docs.insertOne(doc("missing"));
        docs.insertOne(doc("empty").append("classes", entries()));
        docs.insertOne(doc("other").append("classes", entries(entry("MA 201", 2))));
        docs.insertOne(doc("holds").append("classes", entries(entry("MA 201", 2), entry("CS 101", 1))));

        assertThat(docs.find(ne("classes.name", "CS 101")).map(d -> d.getString("_id").getValue()))
                .containsExactlyInAnyOrder("missing", "empty", "other");
        assertThat(docs.find(eq("classes.name", "CS 101")).map(d -> d.getString("_id").getValue()))
                .containsExactly("holds");
    }

    @Test
    void not_gte_on_a_dotted_path_into_an_array_matches_only_when_no_entry_is_at_or_above() {
        docs.insertOne(doc("below").append("classes", entries(entry("MA 201", 1), entry("CS 101", 2))));
        docs.insertOne(doc("one-above").append("classes", entries(entry("MA 201", 1), entry("CS 101", 5))));

        List<String> matched = docs.find(not(gte("classes.seq", 3L))).map(d -> d.getString("_id").getValue())
                .into(new ArrayList<>());

        if (differs(KnownDifference.NOT_ON_ARRAY_PATH_READS_ONE_ENTRY)) {
            assertThat(matched).contains("one-above");   // why guards use not($elemMatch) over arrays instead
        } else {
            assertThat(matched).containsExactly("below");
        }
        assertThat(docs.find(not(elemMatch("classes", gte("seq", 3L)))).map(d -> d.getString("_id").getValue())
                .into(new ArrayList<>())).as("the form the guards use").containsExactly("below");
    }

    /**
     * A plain update in a bulk write says only in the total whether it matched; an upsert that would change the
     * {@code _id} it inserts ({@code $setOnInsert: {_id: other}}) says it per op: matched, it updates (the
     * {@code $setOnInsert} is ignored); matched nothing, its insert is refused with its own write error
     * (ImmutableField on MongoDB) and nothing is inserted, whether the document is there or not. A way for a batch
     * to learn each plain update's outcome in one bulk write (issue 41), if the backend agrees.
     */
    @Test
    void an_upsert_that_would_change_the_id_it_inserts_fails_alone_when_it_matches_nothing_and_inserts_nothing() {
        docs.insertOne(doc("e1").append("_v", new BsonInt64(1)));
        docs.insertOne(doc("e2").append("_v", new BsonInt64(1)));
        BsonDocument elsewhere = new BsonDocument("never", new BsonString("inserted"));
        List<com.mongodb.client.model.WriteModel<BsonDocument>> models = List.of(
                new com.mongodb.client.model.UpdateOneModel<>(and(eq("_id", "e1"), eq("_v", 1L)),
                        combine(inc("_v", 1L), setOnInsert("_id", elsewhere)), new UpdateOptions().upsert(true)),
                new com.mongodb.client.model.UpdateOneModel<>(and(eq("_id", "e2"), eq("_v", 7L)),
                        combine(inc("_v", 1L), setOnInsert("_id", elsewhere)), new UpdateOptions().upsert(true)),
                new com.mongodb.client.model.UpdateOneModel<>(and(eq("_id", "e3"), eq("_v", 1L)),
                        combine(inc("_v", 1L), setOnInsert("_id", elsewhere)), new UpdateOptions().upsert(true)));

        List<Integer> failed = new ArrayList<>();
        int matched;
        try {
            matched = docs.bulkWrite(models, new com.mongodb.client.model.BulkWriteOptions().ordered(false))
                    .getMatchedCount();
        } catch (com.mongodb.MongoBulkWriteException e) {
            e.getWriteErrors().forEach(error -> failed.add(error.getIndex()));
            matched = e.getWriteResult().getMatchedCount();
        }

        List<String> ids = docs.find().map(d -> String.valueOf(d.get("_id"))).into(new ArrayList<>());
        if (differs(KnownDifference.UPSERT_MAY_CHANGE_ITS_ID)) {
            assertThat(ids).as("it inserts the other _id").hasSize(3);
        } else {
            assertThat(failed).as("each miss its own error").containsExactly(1, 2);
            assertThat(matched).isEqualTo(1);
            assertThat(ids).as("nothing inserted").hasSize(2);
        }
    }

    /**
     * What the batch apply relies on (issue 41): a refresh in place ({@code $set} of {@code a.$}) sent as an upsert
     * that also sets another {@code _id} on insert tells its miss as its own write error and inserts nothing, whether
     * the document is there and its entry moved on, or the document is gone; one that matches applies. (MongoDB
     * refuses the insert by position or as a change of {@code _id}; the embedded server by position.)
     */
    @Test
    void a_refresh_by_position_sent_as_an_upsert_that_matches_nothing_fails_alone_and_inserts_nothing() {
        docs.insertOne(BsonDocument.parse("{_id: 'e1', _v: 1, classes: [{name: 'a', seq: 5}]}"));
        BsonDocument never = new BsonDocument("orderless", new BsonString("never inserted"));
        java.util.function.BiFunction<String, Long, com.mongodb.client.model.WriteModel<BsonDocument>> refresh =
                (id, seq) -> new com.mongodb.client.model.UpdateOneModel<>(and(eq("_id", id), elemMatch("classes",
                        and(eq("name", "a"), lt("seq", seq)))), combine(set("classes.$", new BsonDocument("name",
                        new BsonString("a")).append("seq", new BsonInt64(seq))), inc("_v", 1L),
                        setOnInsert("_id", never)), new UpdateOptions().upsert(true));

        List<Integer> failed = new ArrayList<>();
        List<Integer> codes = new ArrayList<>();
        try {
            docs.bulkWrite(List.of(refresh.apply("e1", 3L), refresh.apply("e2", 3L), refresh.apply("e1", 9L)),
                    new com.mongodb.client.model.BulkWriteOptions().ordered(false));
        } catch (com.mongodb.MongoBulkWriteException e) {
            e.getWriteErrors().forEach(error -> {
                failed.add(error.getIndex());
                codes.add(error.getCode());
            });
        }

        assertThat(failed).as("each miss its own error").containsExactly(0, 1);
        assertThat(codes).as("by position, a change of _id, or a duplicate _id").allMatch(code -> code == 2
                || code == 66 || code == 11000);
        assertThat(docs.find().map(d -> d.getString("_id").getValue()).into(new ArrayList<>())).containsExactly("e1");
        assertThat(docs.find().first().getArray("classes").get(0).asDocument().getNumber("seq").longValue())
                .isEqualTo(9);
    }

    /**
     * What a batch's probe relies on (issue 41): an upsert whose only change is a {@code $setOnInsert} of a field
     * inside the string {@code _id} it would insert changes nothing where it matches (no error, counted as matched)
     * and, where it matches nothing, fails alone with its own write error and inserts nothing, the document there
     * or not. (MongoDB refuses the change of {@code _id}, or the path; the embedded server the path.)
     */
    @Test
    void an_upsert_that_only_sets_inside_the_string_id_on_insert_matches_without_a_change_or_fails_alone() {
        docs.insertOne(BsonDocument.parse("{_id: 'e1', _v: 1, _seq: {name: 9}}"));
        java.util.function.BiFunction<String, Long, com.mongodb.client.model.WriteModel<BsonDocument>> probe =
                (id, above) -> new UpdateOneModel<>(and(eq("_id", id), com.mongodb.client.model.Filters.gt("_seq.name",
                        above)), setOnInsert("_id.orderless", "never inserted"), new UpdateOptions().upsert(true));

        List<Integer> failed = new ArrayList<>();
        List<Integer> codes = new ArrayList<>();
        int matched;
        int modified;
        try {
            com.mongodb.bulk.BulkWriteResult result = docs.bulkWrite(List.of(probe.apply("e1", 5L),
                    probe.apply("e1", 12L), probe.apply("e2", 5L)), new BulkWriteOptions().ordered(false));
            matched = result.getMatchedCount();
            modified = result.getModifiedCount();
        } catch (MongoBulkWriteException e) {
            e.getWriteErrors().forEach(error -> {
                failed.add(error.getIndex());
                codes.add(error.getCode());
            });
            matched = e.getWriteResult().getMatchedCount();
            modified = e.getWriteResult().getModifiedCount();
        }

        assertThat(failed).as("each miss its own error").containsExactly(1, 2);
        assertThat(codes).as("a change of _id, or a path that cannot be created").allMatch(code -> code == 66
                || code == 28);
        assertThat(matched).isEqualTo(1);
        assertThat(modified).isZero();
        assertThat(docs.find().into(new ArrayList<>())).as("nothing inserted, nothing changed")
                .containsExactly(BsonDocument.parse("{_id: 'e1', _v: 1, _seq: {name: 9}}"));
    }

    /**
     * What the batch's blind refresh relies on (issue 41): the positional {@code $} names the entry its filter's one
     * positive {@code $elemMatch} found, whatever negated {@code $elemMatch}es on the same array and another one
     * say (a negation records no position).
     */
    @Test
    void the_positional_operator_names_the_positive_match_beside_negated_ones_on_the_same_array() {
        docs.insertOne(BsonDocument.parse("{_id: 'e1', classes: [{name: 'a', seq: 3}, {name: 'b', seq: 5}],"
                + " deleted_classes: [{name: 'c', seq: 1}]}"));

        long matched = docs.updateOne(and(eq("_id", "e1"),
                elemMatch("classes", and(eq("name", "b"), not(gte("seq", 9L)))),
                not(elemMatch("classes", and(eq("name", "b"), gte("seq", 9L)))),
                not(elemMatch("deleted_classes", and(eq("name", "b"), gte("seq", 9L))))),
                set("classes.$", BsonDocument.parse("{name: 'b', seq: 9}"))).getMatchedCount();

        assertThat(matched).isEqualTo(1);
        assertThat(docs.find().first().getArray("classes")).containsExactly(BsonDocument.parse("{name: 'a', seq: 3}"),
                BsonDocument.parse("{name: 'b', seq: 9}"));
    }

    @Test
    void setOnInsert_applies_only_when_the_upsert_inserts() {
        docs.updateOne(eq("_id", "e1"), combine(setOnInsert("_floor", 0L), inc("_v", 1L)), new UpdateOptions().upsert(true));
        docs.updateOne(eq("_id", "e1"), combine(set("_floor", 9L), inc("_v", 1L)));
        docs.updateOne(eq("_id", "e1"), combine(setOnInsert("_floor", 0L), inc("_v", 1L)), new UpdateOptions().upsert(true));

        BsonDocument stored = docs.find().first();
        assertThat(stored.getNumber("_floor").longValue()).isEqualTo(9);
        assertThat(stored.getNumber("_v").longValue()).isEqualTo(3);
    }

    @Test
    void a_version_guard_matches_nothing_once_the_version_moved() {
        docs.insertOne(doc("e1").append("_v", new BsonInt64(1)));
        docs.updateOne(eq("_id", "e1"), inc("_v", 1L));

        assertThat(docs.updateOne(and(eq("_id", "e1"), eq("_v", 1L)), set("x", 1L)).getMatchedCount()).isZero();
        assertThat(docs.updateOne(and(eq("_id", "e1"), eq("_v", 2L)), set("x", 1L)).getMatchedCount()).isEqualTo(1);
    }

    @Test
    void a_replace_guarded_by_every_field_of_the_document_as_read_matches_it_once() {
        // the history's folded state is replaced guarded by all of it: embedded documents, arrays, dates, int64s
        docs.insertOne(new BsonDocument("_id", new BsonDocument("entity", new BsonString("e1")).append("seq",
                new BsonInt64(0))).append("horizon", new BsonInt64(7)).append("state", BsonDocument.parse(
                "{floor: {$numberLong: '0'}, live: {items: [{element: 'a', seq: {$numberLong: '3'}, attrs: {t: 'x'}}]},"
                        + " registers: {name: {seq: {$numberLong: '5'}, value: 'Ada'}}}"))
                .append("at", new BsonDateTime(1_000)));
        BsonDocument read = docs.find().first();
        List<Bson> everyField = new ArrayList<>();
        read.forEach((name, value) -> everyField.add(eq(name, value)));

        assertThat(docs.replaceOne(and(everyField), read.clone().append("horizon", new BsonInt64(9)))
                .getMatchedCount()).isEqualTo(1);
        assertThat(docs.replaceOne(and(everyField), read).getMatchedCount()).as("it changed: no match").isZero();
    }

    @Test
    void an_exists_false_guard_upserts_only_when_the_document_is_absent() {
        docs.updateOne(and(eq("_id", "e1"), exists("_v", false)), combine(set("_floor", 4L), inc("_v", 1L)),
                new UpdateOptions().upsert(true));

        assertThatThrownBy(() -> docs.updateOne(and(eq("_id", "e1"), exists("_v", false)),
                combine(set("_floor", 6L), inc("_v", 1L)), new UpdateOptions().upsert(true)))
                .isInstanceOfSatisfying(MongoWriteException.class, e -> assertThat(
                        ErrorCategory.fromErrorCode(e.getError().getCode())).isEqualTo(ErrorCategory.DUPLICATE_KEY));
        assertThat(docs.find().first().getNumber("_floor").longValue()).isEqualTo(4);
    }

    @Test
    void a_dotted_set_creates_the_nested_field_and_a_dotted_guard_reads_it() {
        docs.updateOne(and(eq("_id", "e1"), not(gte("_seq.name", 3L))), combine(set("name", "Ada"), set("_seq.name", 3L)),
                new UpdateOptions().upsert(true));

        assertThat(docs.find().first().getDocument("_seq").getNumber("name").longValue()).isEqualTo(3);
        assertThat(docs.countDocuments(not(gte("_seq.name", 3L)))).isZero();
        assertThat(docs.countDocuments(not(gte("_seq.name", 4L)))).isEqualTo(1);
    }

    @Test
    void unset_of_a_nested_path_removes_only_that_field() {
        docs.insertOne(doc("e1").append("_seq", new BsonDocument("name", new BsonInt64(1)).append("city", new BsonInt64(2))));

        docs.updateOne(eq("_id", "e1"), unset("_seq.name"));

        assertThat(docs.find().first().getDocument("_seq")).isEqualTo(new BsonDocument("city", new BsonInt64(2)));
    }

    @Test
    void elemMatch_with_lt_on_a_date_finds_old_tombstones() {
        docs.insertOne(doc("old").append("deleted", entries(entry("a", 1).append("at", new BsonDateTime(1_000)))));
        docs.insertOne(doc("new").append("deleted", entries(entry("a", 1).append("at", new BsonDateTime(9_000)))));

        assertThat(docs.find(elemMatch("deleted", lt("at", new BsonDateTime(5_000))))
                .map(d -> d.getString("_id").getValue()).into(new ArrayList<>())).containsExactly("old");
    }

    @Test
    void concurrent_upserts_of_one_new_id_create_one_document_and_the_losers_see_duplicate_key() throws Exception {
        int threads = 8;
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        CountDownLatch start = new CountDownLatch(1);
        AtomicInteger duplicates = new AtomicInteger();
        List<Throwable> unexpected = new CopyOnWriteArrayList<>();
        try {
            for (int i = 0; i < threads; i++) {
                int n = i;
                pool.submit(() -> {
                    try {
                        start.await();
                        docs.updateOne(and(eq("_id", "race"), not(elemMatch("classes", eq("name", "c" + n)))),
                                combine(push("classes", entry("c" + n, n + 1)), inc("_v", 1L)),
                                new UpdateOptions().upsert(true));
                    } catch (MongoWriteException e) {
                        if (ErrorCategory.fromErrorCode(e.getError().getCode()) == ErrorCategory.DUPLICATE_KEY) {
                            duplicates.incrementAndGet();
                        } else {
                            unexpected.add(e);
                        }
                    } catch (Throwable e) {
                        unexpected.add(e);
                    }
                    return null;
                });
            }
            start.countDown();
        } finally {
            pool.shutdown();
            assertThat(pool.awaitTermination(30, TimeUnit.SECONDS)).isTrue();
        }

        assertThat(unexpected).isEmpty();
        assertThat(docs.countDocuments()).isEqualTo(1);
        assertThat(docs.find().first().getArray("classes")).hasSize(threads - duplicates.get());
    }

    @Test
    void concurrent_increments_with_findOneAndUpdate_and_a_projection_return_each_value_once() throws Exception {
        assertThat(concurrentIncrements(true)).as("values returned twice").isZero();
    }

    @Test
    void concurrent_increments_with_findOneAndUpdate_without_a_projection_return_each_value_once() throws Exception {
        assertThat(concurrentIncrements(false)).as("values returned twice").isZero();
    }

    private long concurrentIncrements(boolean projected) throws Exception {
        var options = new com.mongodb.client.model.FindOneAndUpdateOptions().upsert(true)
                .returnDocument(com.mongodb.client.model.ReturnDocument.AFTER);
        if (projected) {
            options.projection(com.mongodb.client.model.Projections.include("n"));
        }
        ExecutorService pool = Executors.newFixedThreadPool(8);
        List<java.util.concurrent.Future<List<Long>>> futures = new ArrayList<>();
        try {
            for (int t = 0; t < 8; t++) {
                futures.add(pool.submit(() -> {
                    List<Long> seen = new ArrayList<>();
                    for (int i = 0; i < 1000; i++) {
                        seen.add(docs.findOneAndUpdate(eq("_id", "counter"), inc("n", 1L), options).getNumber("n").longValue());
                    }
                    return seen;
                }));
            }
            List<Long> all = new ArrayList<>();
            for (var f : futures) {
                all.addAll(f.get(60, TimeUnit.SECONDS));
            }
            return all.size() - all.stream().distinct().count();
        } finally {
            pool.shutdownNow();
        }
    }

    /**
     * Two writers {@code $inc} three counters together, one of them nested, with a large field between them so
     * that a reply takes a while to encode; four readers read the document. Every version the writers made has
     * the three equal, so a read that finds them unequal returned a document that never existed. (The embedded
     * server used to encode a reply from the stored document after releasing its lock while an update wrote
     * the next version into it field by field: 1,178 such reads in 28,592 through the demo's server.)
     */
    @Test
    void a_read_never_returns_a_document_that_never_existed() throws Exception {
        String filler = "x".repeat(200_000);
        docs.insertOne(doc("torn").append("a", new BsonInt64(0)).append("filler", new BsonString(filler))
                .append("b", new BsonInt64(0)).append("n", new BsonDocument("c", new BsonInt64(0))));
        int readers = 4;
        int readsEach = 500;
        AtomicInteger readersLeft = new AtomicInteger(readers);
        List<String> torn = new CopyOnWriteArrayList<>();
        ExecutorService pool = Executors.newFixedThreadPool(readers + 2);
        List<java.util.concurrent.Future<?>> work = new ArrayList<>();
        try {
            for (int w = 0; w < 2; w++) {
                work.add(pool.submit(() -> {
                    while (readersLeft.get() > 0) {
                        docs.updateOne(eq("_id", "torn"), combine(inc("a", 1L), inc("b", 1L), inc("n.c", 1L)));
                    }
                    return null;
                }));
            }
            for (int r = 0; r < readers; r++) {
                work.add(pool.submit(() -> {
                    try {
                        for (int i = 0; i < readsEach; i++) {
                            BsonDocument read = docs.find(eq("_id", "torn")).first();
                            long a = read.getInt64("a").getValue();
                            long b = read.getInt64("b").getValue();
                            long c = read.getDocument("n").getInt64("c").getValue();
                            if (a != b || b != c) {
                                torn.add("a=" + a + " b=" + b + " n.c=" + c);
                            }
                        }
                    } finally {
                        readersLeft.decrementAndGet();
                    }
                    return null;
                }));
            }
            for (var w : work) {
                w.get(120, TimeUnit.SECONDS);
            }
        } finally {
            readersLeft.set(0);
            pool.shutdownNow();
        }
        assertThat(torn).as("reads of a document that never existed, of " + readers * readsEach).isEmpty();
    }

    @Test
    void an_update_given_as_a_pipeline() {
        docs.insertOne(doc("e1").append("a", new BsonInt64(1)));
        List<BsonDocument> pipeline = List.of(new BsonDocument("$set", new BsonDocument("b", new BsonString("$a"))));

        if (differs(KnownDifference.NO_PIPELINE_UPDATES)) {
            assertThatThrownBy(() -> docs.updateOne(eq("_id", "e1"), pipeline)).isInstanceOf(MongoException.class);
        } else {
            docs.updateOne(eq("_id", "e1"), pipeline);
            assertThat(docs.find().first().getNumber("b").longValue()).isEqualTo(1);
        }
    }

    @Test
    void a_collection_change_stream_sees_inserts_and_updates_with_the_full_document() {
        try (MongoChangeStreamCursor<ChangeStreamDocument<BsonDocument>> cursor =
                     docs.watch().fullDocument(FullDocument.UPDATE_LOOKUP).cursor()) {
            docs.insertOne(doc("e1").append("v", new BsonInt64(1)));
            docs.updateOne(eq("_id", "e1"), set("v", 2L));

            List<ChangeStreamDocument<BsonDocument>> events = next(cursor, 2);
            assertThat(events.get(0).getFullDocument().getNumber("v").longValue()).isEqualTo(1);
            assertThat(events.get(1).getFullDocument().getString("_id").getValue()).isEqualTo("e1");
            assertThat(events.get(1).getFullDocument().getNumber("v").longValue()).isEqualTo(2);
            assertThat(events.get(1).getResumeToken()).isNotNull();
        }
    }

    @Test
    void update_events_carry_the_document_key_and_namespace() {
        docs.insertOne(doc("e1"));
        try (MongoChangeStreamCursor<ChangeStreamDocument<BsonDocument>> cursor =
                     docs.watch().fullDocument(FullDocument.UPDATE_LOOKUP).cursor()) {
            docs.updateOne(eq("_id", "e1"), set("v", 2L));
            ChangeStreamDocument<BsonDocument> update = next(cursor, 1).get(0);

            BsonDocument expectedKey = new BsonDocument("_id", new BsonString("e1"));
            if (differs(KnownDifference.UPDATE_EVENT_DOCUMENT_KEY_WRONG)) {
                assertThat(update.getDocumentKey()).isNotEqualTo(expectedKey);
            } else {
                assertThat(update.getDocumentKey()).isEqualTo(expectedKey);
            }
            if (differs(KnownDifference.UPDATE_EVENT_NAMESPACE_MISSING)) {
                assertThat(update.getNamespace()).isNull();
            } else {
                assertThat(update.getNamespace()).isEqualTo(docs.getNamespace());
            }
        }
    }

    @Test
    void a_delete_event_carries_the_deleted_id_in_its_document_key_and_no_document() {
        docs.insertOne(doc("e1"));
        try (MongoChangeStreamCursor<ChangeStreamDocument<BsonDocument>> cursor =
                     docs.watch().fullDocument(FullDocument.UPDATE_LOOKUP).cursor()) {
            docs.deleteOne(eq("_id", "e1"));
            ChangeStreamDocument<BsonDocument> delete = next(cursor, 1).get(0);

            assertThat(delete.getOperationType()).isEqualTo(com.mongodb.client.model.changestream.OperationType.DELETE);
            assertThat(delete.getDocumentKey()).isEqualTo(new BsonDocument("_id", new BsonString("e1")));
            assertThat(delete.getFullDocument()).isNull();
        }
    }

    @Test
    void an_update_looked_up_after_its_document_was_deleted_has_no_full_document() {
        docs.insertOne(doc("e1"));
        try (MongoChangeStreamCursor<ChangeStreamDocument<BsonDocument>> cursor =
                     docs.watch().fullDocument(FullDocument.UPDATE_LOOKUP).cursor()) {
            docs.updateOne(eq("_id", "e1"), set("v", 2L));
            docs.deleteOne(eq("_id", "e1"));
            List<ChangeStreamDocument<BsonDocument>> events = next(cursor, 2);

            assertThat(events.get(0).getOperationType()).isEqualTo(com.mongodb.client.model.changestream.OperationType.UPDATE);
            assertThat(events.get(0).getFullDocument()).as("the lookup finds no document").isNull();
            assertThat(events.get(1).getOperationType()).isEqualTo(com.mongodb.client.model.changestream.OperationType.DELETE);
        }
    }

    @Test
    void a_change_stream_takes_a_project_stage_that_drops_updateDescription() {
        docs.insertOne(doc("e1"));
        try (MongoChangeStreamCursor<ChangeStreamDocument<BsonDocument>> cursor = docs.watch(List.of(
                        com.mongodb.client.model.Aggregates.project(
                                com.mongodb.client.model.Projections.exclude("updateDescription"))))
                .fullDocument(FullDocument.UPDATE_LOOKUP).cursor()) {
            docs.updateOne(eq("_id", "e1"), set("v", 2L));
            ChangeStreamDocument<BsonDocument> update = next(cursor, 1).get(0);

            assertThat(update.getUpdateDescription()).isNull();
            assertThat(update.getFullDocument().getNumber("v").longValue()).isEqualTo(2);
            assertThat(update.getResumeToken()).isNotNull();
        }
    }

    @Test
    void listCollections_reports_a_uuid_that_a_recreated_collection_does_not_share() {
        docs.insertOne(doc("e1"));
        BsonValue before = uuidOf(db, "conformance");
        docs.drop();
        docs.insertOne(doc("e1"));
        BsonValue after = uuidOf(db, "conformance");

        assertThat(before).isNotNull();
        assertThat(after).isNotNull().isNotEqualTo(before);
        assertThat(uuidOf(db, "conformance")).as("stable while the collection lives").isEqualTo(after);
    }

    private static BsonValue uuidOf(MongoDatabase db, String name) {
        for (BsonDocument info : db.listCollections(BsonDocument.class).filter(eq("name", name))) {
            if (info.getString("name").getValue().equals(name)) {
                return info.isDocument("info") ? info.getDocument("info").get("uuid") : null;
            }
        }
        return null;
    }

    @Test
    void a_new_change_stream_has_a_resume_token_before_its_first_event() {
        try (MongoChangeStreamCursor<ChangeStreamDocument<BsonDocument>> cursor = docs.watch().cursor()) {
            cursor.tryNext();
            if (differs(KnownDifference.NO_RESUME_TOKEN_BEFORE_FIRST_EVENT)) {
                assertThat(cursor.getResumeToken()).isNull();
            } else {
                assertThat(cursor.getResumeToken()).isNotNull();
            }
        }
    }

    @Test
    void a_resume_token_resumes_right_after_its_event() {
        BsonDocument third;
        try (MongoChangeStreamCursor<ChangeStreamDocument<BsonDocument>> cursor = docs.watch().cursor()) {
            for (int i = 1; i <= 5; i++) {
                docs.insertOne(doc("e" + i));
            }
            third = next(cursor, 3).get(2).getResumeToken();
        }
        try (MongoChangeStreamCursor<ChangeStreamDocument<BsonDocument>> cursor = docs.watch().resumeAfter(third).cursor()) {
            assertThat(next(cursor, 1).get(0).getDocumentKey()).isEqualTo(new BsonDocument("_id", new BsonString("e4")));
        }
    }

    @Test
    void a_resume_token_the_server_never_issued() {
        docs.insertOne(doc("e1"));
        BsonDocument foreign = new BsonDocument("_data", new BsonString("00112233"));
        if (differs(KnownDifference.FOREIGN_RESUME_TOKEN_ACCEPTED)) {
            try (var cursor = docs.watch().resumeAfter(foreign).cursor()) {
                assertThat(next(cursor, 1)).hasSize(1);
            }
        } else {
            assertThatThrownBy(() -> {
                try (var cursor = docs.watch().resumeAfter(foreign).cursor()) {
                    cursor.tryNext();
                }
            }).isInstanceOfSatisfying(MongoException.class, e -> assertThat(e.getCode()).isIn(260, 280, 286));
        }
    }

    @Test
    void a_whole_database_can_be_watched(MongoDatabase db) {
        try (var dbCursor = db.watch(List.of(), Document.class).cursor();
             var collectionCursor = docs.watch().cursor()) {
            docs.insertOne(doc("e1"));
            assertThat(next(collectionCursor, 1)).hasSize(1);

            if (differs(KnownDifference.NO_DATABASE_WATCH)) {
                // the collection stream has the event; the database stream never delivers it
                assertThat(dbCursor.tryNext()).isNull();
            } else {
                assertThat(next(dbCursor, 1)).hasSize(1);
            }
        } catch (MongoException e) {
            assertThat(differs(KnownDifference.NO_DATABASE_WATCH)).as("refused: " + e.getMessage()).isTrue();
        }
    }

    /** What Spring Boot's MongoDB health check sends (MongoDB 4.4.2 and later call isMaster so). */
    @Test
    void hello_answers_that_the_server_is_a_writable_primary() {
        Document hello = db.runCommand(new Document("hello", 1));

        assertThat(hello.get("ok", Number.class).intValue()).isEqualTo(1);
        assertThat(hello.getBoolean("isWritablePrimary")).isTrue();
    }

    @Test
    void a_guarded_update_on_a_large_collection_examines_one_document() {
        List<BsonDocument> many = new ArrayList<>();
        for (int i = 0; i < 5_000; i++) {
            many.add(doc("e" + i).append("_v", new BsonInt64(1)));
        }
        docs.insertMany(many);
        Bson guarded = and(eq("_id", "e4321"), not(gte("_floor", 5L)), not(elemMatch("classes", eq("name", "CS 101"))),
                or(elemMatch("deleted_classes", eq("name", "CS 101")), not(gte("_gcFloor", 5L))));
        Bson update = combine(push("classes", entry("CS 101", 5)), inc("_v", 1L));

        long examined;
        if (backend instanceof EmbeddedMongo embedded) {
            // counted by the embedded server's query path (its _id lookup hook)
            long before = embedded.documentsExamined(docs.getNamespace().getDatabaseName(), docs.getNamespace().getCollectionName());
            assertThat(docs.updateOne(guarded, update).getModifiedCount()).isEqualTo(1);
            examined = embedded.documentsExamined(docs.getNamespace().getDatabaseName(), docs.getNamespace().getCollectionName())
                    - before;
        } else {
            Document explained = db.runCommand(new Document("explain", new Document("update", docs.getNamespace().getCollectionName())
                    .append("updates", List.of(new Document("q", guarded.toBsonDocument()).append("u", update.toBsonDocument()))))
                    .append("verbosity", "executionStats"));
            examined = explained.get("executionStats", Document.class).get("totalDocsExamined", Number.class).longValue();
        }
        assertThat(examined).as("documents examined by a guarded update among 5,000").isEqualTo(1);
    }

    @Test
    void an_inc_past_the_largest_long_is_refused_as_bad_value_and_changes_nothing() {
        docs.insertOne(doc("e").append("n", new BsonInt64(Long.MAX_VALUE - 10)).append("_v", new BsonInt64(1)));

        assertThatThrownBy(() -> docs.updateOne(eq("_id", "e"), combine(inc("n", 20L), inc("_v", 1L))))
                .isInstanceOfSatisfying(MongoWriteException.class, e -> {
                    assertThat(e.getCode()).as("BadValue").isEqualTo(2);
                    assertThat(e.getError().getMessage()).contains("Failed to apply $inc operations to current value");
                });
        assertThat(docs.find(eq("_id", "e")).first()).as("nothing changed, _v included")
                .isEqualTo(doc("e").append("n", new BsonInt64(Long.MAX_VALUE - 10)).append("_v", new BsonInt64(1)));
    }

    @Test
    void an_inc_past_the_smallest_long_is_refused_too() {
        docs.insertOne(doc("e").append("n", new BsonInt64(Long.MIN_VALUE + 1)));

        assertThatThrownBy(() -> docs.updateOne(eq("_id", "e"), inc("n", -2L)))
                .isInstanceOfSatisfying(MongoWriteException.class, e -> {
                    assertThat(e.getCode()).isEqualTo(2);
                    assertThat(e.getError().getMessage()).contains("Failed to apply $inc operations to current value");
                });
        assertThat(docs.find(eq("_id", "e")).first().get("n")).isEqualTo(new BsonInt64(Long.MIN_VALUE + 1));
    }

    @Test
    void an_inc_refused_in_an_unordered_bulk_write_fails_alone() {
        docs.insertMany(List.of(doc("big").append("n", new BsonInt64(Long.MAX_VALUE)),
                doc("small").append("n", new BsonInt64(1))));

        assertThatThrownBy(() -> docs.bulkWrite(List.of(new UpdateOneModel<>(eq("_id", "big"), inc("n", 1L)),
                new UpdateOneModel<>(eq("_id", "small"), inc("n", 1L))), new BulkWriteOptions().ordered(false)))
                .isInstanceOfSatisfying(MongoBulkWriteException.class, e -> {
                    assertThat(e.getWriteErrors()).hasSize(1);
                    assertThat(e.getWriteErrors().get(0).getIndex()).isZero();
                    assertThat(e.getWriteErrors().get(0).getCode()).isEqualTo(2);
                });
        assertThat(docs.find(eq("_id", "small")).first().get("n")).isEqualTo(new BsonInt64(2));
    }

    @Test
    void an_inc_past_the_largest_int_stores_a_long() {
        docs.insertOne(doc("e").append("n", new org.bson.BsonInt32(Integer.MAX_VALUE)));

        docs.updateOne(eq("_id", "e"), inc("n", 1));

        assertThat(docs.find(eq("_id", "e")).first().get("n")).isEqualTo(new BsonInt64(Integer.MAX_VALUE + 1L));
    }

    @Test
    void a_set_of_a_number_equal_to_the_stored_one_but_of_another_type_stores_the_new_type() {
        docs.insertOne(doc("e").append("n", new org.bson.BsonInt32(5))
                .append("line", new BsonDocument("quantity", new org.bson.BsonInt32(2))));

        docs.updateOne(eq("_id", "e"), combine(set("n", new BsonInt64(5)),
                set("line", new BsonDocument("quantity", new BsonInt64(2)))));

        BsonDocument stored = docs.find(eq("_id", "e")).first();
        assertThat(stored.get("n")).isEqualTo(new BsonInt64(5));
        assertThat(stored.getDocument("line").get("quantity")).isEqualTo(new BsonInt64(2));
    }

    @Test
    void a_set_of_a_decimal_that_differs_only_past_a_doubles_precision_stores_its_digits() {
        org.bson.BsonDecimal128 before = new org.bson.BsonDecimal128(org.bson.types.Decimal128.parse("-9223372036854775821"));
        org.bson.BsonDecimal128 after = new org.bson.BsonDecimal128(org.bson.types.Decimal128.parse("-9223372036854775814"));
        docs.insertOne(doc("e").append("n", before));

        docs.updateOne(eq("_id", "e"), set("n", after));

        assertThat(docs.find(eq("_id", "e")).first().get("n")).isEqualTo(after);
    }

    /** The room guard of a counter's pending increments: an array holds fewer entries than a position names. */
    @Test
    void exists_false_on_an_array_position_matches_an_array_shorter_than_it_and_a_missing_one() {
        docs.insertMany(List.of(doc("short").append("a", entries(entry("x", 1), entry("y", 2))),
                doc("long").append("a", entries(entry("x", 1), entry("y", 2), entry("z", 3))), doc("none")));

        List<String> matched = new ArrayList<>();
        docs.find(exists("a.2", false)).forEach(d -> matched.add(d.getString("_id").getValue()));

        assertThat(matched).containsExactlyInAnyOrder("short", "none");
    }

    /** The guard that an increment keeps a counter within a long, missing counting as 0. */
    @Test
    void not_gt_matches_a_missing_field_and_a_long_at_or_below_the_bound() {
        docs.insertMany(List.of(doc("below").append("n", new BsonInt64(Long.MAX_VALUE - 5)),
                doc("above").append("n", new BsonInt64(Long.MAX_VALUE - 4)), doc("none")));

        List<String> matched = new ArrayList<>();
        docs.find(not(com.mongodb.client.model.Filters.gt("n", Long.MAX_VALUE - 5)))
                .forEach(d -> matched.add(d.getString("_id").getValue()));

        assertThat(matched).containsExactlyInAnyOrder("below", "none");
    }

    /** The guard that no run of a counter's increments holds a seq. */
    @Test
    void not_elemMatch_with_a_range_matches_only_when_no_entry_spans_the_value() {
        BsonDocument run = new BsonDocument("seq", new BsonInt64(10)).append("hi", new BsonInt64(20));
        docs.insertMany(List.of(doc("spans").append("runs", entries(run)), doc("none")));
        Bson holds15 = not(elemMatch("runs", and(com.mongodb.client.model.Filters.lte("seq", 15L), gte("hi", 15L))));
        Bson holds21 = not(elemMatch("runs", and(com.mongodb.client.model.Filters.lte("seq", 21L), gte("hi", 21L))));

        assertThat(docs.countDocuments(holds15)).as("15 is in the run").isEqualTo(1);
        assertThat(docs.countDocuments(holds21)).as("21 is in none").isEqualTo(2);
    }

    @Test
    void a_value_of_every_data_type_is_stored_and_read_back_with_its_type() {
        BsonDocument typed = doc("e")
                .append("int", new org.bson.BsonInt32(-7)).append("smallLong", new BsonInt64(2))
                .append("negativeZero", new org.bson.BsonDouble(-0.0)).append("nan", new org.bson.BsonDouble(Double.NaN))
                .append("infinity", new org.bson.BsonDouble(Double.NEGATIVE_INFINITY))
                .append("decimal", new org.bson.BsonDecimal128(org.bson.types.Decimal128.parse("1.10")))
                .append("decimalNaN", new org.bson.BsonDecimal128(org.bson.types.Decimal128.NaN))
                .append("before1970", new BsonDateTime(-62_135_596_800_000L))
                .append("objectId", new org.bson.BsonObjectId(new org.bson.types.ObjectId()))
                .append("binary", new org.bson.BsonBinary(new byte[] {1, 2, 3}))
                .append("uuid", new org.bson.BsonBinary(java.util.UUID.randomUUID(), org.bson.UuidRepresentation.STANDARD))
                .append("nested", new BsonDocument("list", new org.bson.BsonArray(List.of(org.bson.BsonNull.VALUE,
                        org.bson.BsonBoolean.TRUE, new BsonString("Zoë 𝄞")))));

        docs.insertOne(typed);

        assertThat(docs.find(eq("_id", "e")).first()).isEqualTo(typed);
    }

    @Test
    void binary_data_of_any_subtype_is_stored_with_its_subtype() {
        org.bson.BsonBinary userDefined = new org.bson.BsonBinary((byte) 0x80, new byte[] {1, 2});
        org.bson.BsonBinary md5 = new org.bson.BsonBinary(org.bson.BsonBinarySubType.MD5, new byte[16]);
        if (differs(KnownDifference.BINARY_SUBTYPES_LIMITED)) {
            docs.insertOne(doc("user").append("b", userDefined));
            assertThat(docs.find(eq("_id", "user")).first().get("b")).as("stored as generic binary")
                    .isEqualTo(new org.bson.BsonBinary(new byte[] {1, 2}));
            assertThatThrownBy(() -> docs.insertOne(doc("md5").append("b", md5))).isInstanceOf(MongoException.class);
        } else {
            docs.insertMany(List.of(doc("user").append("b", userDefined), doc("md5").append("b", md5)));
            assertThat(docs.find(eq("_id", "user")).first().get("b")).isEqualTo(userDefined);
            assertThat(docs.find(eq("_id", "md5")).first().get("b")).isEqualTo(md5);
        }
    }

    private boolean differs(KnownDifference difference) {
        boolean declared = backend.knownDifferences().contains(difference);
        if (declared) {
            DIFFERENCES_SEEN.add(difference.name());
        }
        return declared;
    }

    private static <T> List<T> next(MongoChangeStreamCursor<T> cursor, int count) {
        List<T> events = new ArrayList<>();
        Awaitility.await().atMost(Duration.ofSeconds(20)).until(() -> {
            T event = cursor.tryNext();
            if (event != null) {
                events.add(event);
            }
            return events.size() >= count;
        });
        return events;
    }

    private static BsonDocument doc(String id) {
        return new BsonDocument("_id", new BsonString(id));
    }

    private static BsonDocument entry(String name, long seq) {
        return new BsonDocument("name", new BsonString(name)).append("seq", new BsonInt64(seq));
    }

    private static org.bson.BsonArray entries(BsonDocument... entries) {
        return new org.bson.BsonArray(List.of(entries));
    }
}
