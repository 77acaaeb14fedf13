package dev.orderless.backends;

import static com.mongodb.client.model.Filters.and;
import static com.mongodb.client.model.Filters.eq;
import static com.mongodb.client.model.Filters.gte;
import static com.mongodb.client.model.Filters.in;
import static com.mongodb.client.model.Filters.not;
import static com.mongodb.client.model.Filters.or;
import static com.mongodb.client.model.Updates.inc;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.mongodb.MongoException;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.model.UpdateOptions;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Supplier;
import java.util.regex.Pattern;
import org.bson.Document;
import org.bson.RawBsonDocument;
import org.bson.codecs.DocumentCodec;
import org.bson.conversions.Bson;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The embedded MongoDB serves a filter that pins {@code _id} from the {@code _id} index, whatever else the
 * filter says, and matches the rest on that one candidate. This is a hook into mongo-java-server's
 * internals ({@link IdLookupIndex}): if an upgrade of the pinned version breaks it, these tests fail.
 * Always the embedded server, whatever backend the run uses: it is what is under test.
 */
class EmbeddedMongoTest {
    private static final String HOOK_GONE = "the _id lookup hook (IdLookupIndex) no longer serves this filter:"
            + " has mongo-java-server been upgraded? Documents examined";
    private static final int SIZE = 20_000;
    private static final String DB = "embedded_test";
    private static EmbeddedMongo mongo;
    private static MongoClient client;
    private static MongoCollection<Document> docs;

    @BeforeAll
    static void aLargeCollection() {
        mongo = EmbeddedMongo.start();
        client = mongo.newClient();
        docs = client.getDatabase(DB).getCollection("large");
        List<Document> batch = new ArrayList<>();
        for (int i = 0; i < SIZE; i++) {
            batch.add(new Document("_id", "e" + i).append("_v", 1L).append("n", i));
        }
        docs.insertMany(batch);
        docs.insertOne(new Document("_id", 7).append("_v", 1L));
    }

    @AfterAll
    static void close() {
        client.close();
        mongo.close();
    }

    /** Runs {@code query} and returns how many documents the server examined for it. */
    private static <T> long examinedBy(Supplier<T> query) {
        long before = mongo.documentsExamined(DB, "large");
        query.get();
        return mongo.documentsExamined(DB, "large") - before;
    }

    private static List<Document> find(Bson filter) {
        return docs.find(filter).into(new ArrayList<>());
    }

    @Test
    void a_guarded_filter_examines_one_document_in_a_large_collection() {
        Bson guarded = and(eq("_id", "e123"), not(gte("_v", 5L)));

        assertThat(examinedBy(() -> find(guarded))).as(HOOK_GONE).isEqualTo(1);
        assertThat(find(guarded)).extracting(d -> d.get("n")).containsExactly(123);
    }

    @Test
    void a_guarded_update_examines_one_document_in_a_large_collection() {
        Bson guarded = and(eq("_id", "e456"), eq("_v", 1L));

        assertThat(examinedBy(() -> docs.updateOne(guarded, inc("hits", 1)))).as(HOOK_GONE).isEqualTo(1);
        assertThat(find(eq("_id", "e456")).get(0).getInteger("hits")).isEqualTo(1);
    }

    @Test
    void id_beside_other_top_level_fields_examines_one_document() {
        Bson filter = new Document("_id", "e77").append("n", 77);

        assertThat(examinedBy(() -> find(filter))).as(HOOK_GONE).isEqualTo(1);
        assertThat(find(filter)).hasSize(1);
    }

    @Test
    void id_given_with_eq_examines_one_document() {
        Bson filter = new Document("_id", new Document("$eq", "e78")).append("n", 78);

        assertThat(examinedBy(() -> find(filter))).as(HOOK_GONE).isEqualTo(1);
        assertThat(find(filter)).hasSize(1);
    }

    @Test
    void id_in_a_list_examines_only_the_listed_documents() {
        Bson filter = and(in("_id", "e1", "e2", "e3", "missing"), gte("n", 2));

        assertThat(examinedBy(() -> find(filter))).as(HOOK_GONE).isEqualTo(3);
        assertThat(find(filter)).extracting(d -> d.get("_id")).containsExactlyInAnyOrder("e2", "e3");
    }

    @Test
    void the_rest_of_the_filter_is_still_matched_on_the_candidate() {
        assertThat(find(and(eq("_id", "e9"), eq("_v", 2L)))).isEmpty();
        assertThat(find(and(eq("_id", "e9"), eq("_id", "e10")))).isEmpty();
    }

    @Test
    void a_guarded_upsert_that_does_not_match_still_hits_the_duplicate_key() {
        Bson stale = and(eq("_id", "e10"), eq("_v", 99L));

        assertThatThrownBy(() -> docs.updateOne(stale, inc("hits", 1), new UpdateOptions().upsert(true)))
                .hasMessageContaining("E11000");
    }

    @Test
    void numeric_ids_match_across_number_types_as_a_plain_id_query_does() {
        assertThat(examinedBy(() -> find(and(eq("_id", 7L), eq("_v", 1L))))).as(HOOK_GONE).isEqualTo(1);
        assertThat(find(and(eq("_id", 7L), eq("_v", 1L)))).hasSize(1);
        assertThat(find(and(eq("_id", 7.0), eq("_v", 1L)))).hasSize(1);
    }

    @Test
    void a_regular_expression_in_an_id_list_is_left_to_the_scan_and_finds_every_match() {
        Bson filter = and(in("_id", Pattern.compile("^e12[0-9]$"), "e5"), eq("_v", 1L));

        assertThat(find(filter)).hasSize(11);
        assertThat(find(and(in("_id", Pattern.compile("^e12$"), Pattern.compile("^e13$")), eq("_v", 1L)))).hasSize(2);
    }

    @Test
    void a_malformed_filter_is_refused_even_when_no_document_has_the_id() {
        Bson malformed = new Document("$bogus", 1).append("_id", "no-such-id");

        assertThatThrownBy(() -> find(malformed)).isInstanceOf(MongoException.class).hasMessageContaining("$bogus");
        assertThatThrownBy(() -> docs.updateOne(malformed, inc("hits", 1), new UpdateOptions().upsert(true)))
                .isInstanceOf(MongoException.class);
        assertThat(find(eq("_id", "no-such-id"))).isEmpty();
    }

    @Test
    void an_id_only_under_or_is_not_implied_and_the_collection_is_scanned() {
        Bson filter = or(eq("_id", "e5"), eq("n", 6));

        assertThat(examinedBy(() -> find(filter))).isGreaterThanOrEqualTo(SIZE);
        assertThat(find(filter)).extracting(d -> d.get("_id")).containsExactlyInAnyOrder("e5", "e6");
    }

    @Test
    void coll_stats_size_is_the_bson_size_of_the_documents_after_inserts_updates_and_deletes() {
        MongoCollection<Document> sized = client.getDatabase(DB).getCollection("sized");
        sized.insertMany(List.of(new Document("_id", "a").append("n", 1), new Document("_id", "b").append("n", 2),
                new Document("_id", "c").append("tags", List.of("x", "y"))));
        sized.updateOne(eq("_id", "a"), new Document("$push", new Document("tags", "a much longer tag than before")));
        sized.updateOne(eq("_id", "b"), new Document("$unset", new Document("n", "")));
        sized.deleteOne(eq("_id", "c"));

        long expected = 0;
        for (Document stored : sized.find()) {
            expected += new RawBsonDocument(stored, new DocumentCodec()).getByteBuffer().remaining();
        }
        Document stats = client.getDatabase(DB).runCommand(new Document("collStats", "sized"));
        assertThat(stats.get("size", Number.class).longValue()).isEqualTo(expected).isPositive();
        assertThat(stats.get("count", Number.class).longValue()).isEqualTo(2);
    }

    @Test
    void a_collection_that_does_not_exist_has_examined_nothing() {
        assertThat(mongo.documentsExamined("no_such_db", "none")).isZero();
        assertThat(client.listDatabaseNames().into(new ArrayList<>())).doesNotContain("no_such_db");
    }
}
