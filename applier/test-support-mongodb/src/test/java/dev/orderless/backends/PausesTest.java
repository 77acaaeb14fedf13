package dev.orderless.backends;

import static com.mongodb.client.model.Filters.eq;
import static com.mongodb.client.model.Updates.combine;
import static com.mongodb.client.model.Updates.inc;
import static com.mongodb.client.model.Updates.set;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.MongoCollection;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.bson.BsonDocument;
import org.bson.BsonInt64;
import org.bson.BsonString;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * {@link EmbeddedMongo#pause}: a test holds one chosen command at a chosen point, so that an interleaving
 * happens every time instead of once in a thousand runs.
 */
class PausesTest {
    private static final Duration WAIT = Duration.ofSeconds(10);
    private static EmbeddedMongo mongo;
    private static MongoClient client;
    private static ExecutorService threads;
    private MongoCollection<BsonDocument> docs;

    @BeforeAll
    static void start() {
        mongo = EmbeddedMongo.start();
        client = MongoClients.create(mongo.connectionString());
        threads = Executors.newCachedThreadPool();
    }

    @AfterAll
    static void stop() {
        threads.shutdownNow();
        client.close();
        mongo.close();
    }

    @BeforeEach
    void aDocument() {
        docs = client.getDatabase("pauses").getCollection("docs", BsonDocument.class);
        docs.drop();
        docs.insertOne(new BsonDocument("_id", new BsonString("e")).append("n", new BsonInt64(1)));
    }

    @Test
    void an_update_held_before_it_runs_writes_nothing_until_it_is_released() throws Exception {
        try (Pause update = mongo.pause(PausePoint.before("update", "docs"))) {
            Future<?> write = threads.submit(() -> docs.updateOne(eq("_id", "e"), set("n", 2L)));
            update.awaitHeld(WAIT);

            assertThat(n()).as("read while the update is held").isEqualTo(1);
            update.release();
            write.get(WAIT.toSeconds(), TimeUnit.SECONDS);
        }
        assertThat(n()).isEqualTo(2);
    }

    @Test
    void a_read_held_after_it_ran_returns_the_document_as_it_was_when_it_ran() throws Exception {
        try (Pause find = mongo.pause(PausePoint.after("find", "docs"))) {
            Future<BsonDocument> read = threads.submit(() -> docs.find(eq("_id", "e")).first());
            find.awaitHeld(WAIT);
            docs.updateOne(eq("_id", "e"), set("n", 2L));   // lands between the read and its reply
            find.release();

            assertThat(read.get(WAIT.toSeconds(), TimeUnit.SECONDS).getInt64("n").getValue()).isEqualTo(1);
        }
    }

    @Test
    void a_read_held_in_the_middle_of_its_reply_sends_one_version() throws Exception {
        docs.updateOne(eq("_id", "e"), combine(set("a", 0L), set("b", 0L)));
        try (Pause find = mongo.pause(PausePoint.whileReplying("find", "docs", "a"))) {
            Future<BsonDocument> read = threads.submit(() -> docs.find(eq("_id", "e")).first());
            find.awaitHeld(WAIT);                    // field a is sent
            docs.updateOne(eq("_id", "e"), combine(inc("a", 1L), inc("b", 1L)));
            find.release();                          // b is sent: the same version's

            BsonDocument sent = read.get(WAIT.toSeconds(), TimeUnit.SECONDS);
            assertThat(sent.getInt64("b")).isEqualTo(sent.getInt64("a"));
        }
    }

    @Test
    void only_the_first_command_that_matches_is_held() throws Exception {
        try (Pause update = mongo.pause(PausePoint.before("update", "docs")
                .where(command -> command.toJson().contains(": 5}")))) {
            docs.updateOne(eq("_id", "e"), set("n", 4L));   // does not match: goes through
            Future<?> held = threads.submit(() -> docs.updateOne(eq("_id", "e"), set("n", 5L)));
            update.awaitHeld(WAIT);
            docs.updateOne(eq("_id", "e"), set("m", 5L));   // matches, but the pause is taken

            assertThat(n()).isEqualTo(4);
            update.release();
            held.get(WAIT.toSeconds(), TimeUnit.SECONDS);
        }
        assertThat(n()).isEqualTo(5);
    }

    @Test
    void a_command_that_failed_is_held_after_it_before_its_error_is_sent() throws Exception {
        try (Pause upsert = mongo.pause(PausePoint.after("findAndModify", "docs"))) {
            // no document has n 99, so the upsert inserts _id e, which exists: a duplicate key
            Future<?> failing = threads.submit(() -> docs.findOneAndUpdate(
                    new BsonDocument("_id", new BsonString("e")).append("n", new BsonInt64(99)), set("n", 2L),
                    new com.mongodb.client.model.FindOneAndUpdateOptions().upsert(true)));
            upsert.awaitHeld(WAIT);

            assertThat(failing).isNotDone();
            upsert.release();
            assertThatThrownBy(() -> failing.get(WAIT.toSeconds(), TimeUnit.SECONDS))
                    .hasRootCauseInstanceOf(com.mongodb.MongoCommandException.class).hasMessageContaining("E11000");
        }
    }

    @Test
    void connections_opened_while_a_command_is_held_are_served_however_many_came_before() throws Exception {
        try (Pause find = mongo.pause(PausePoint.after("find", "docs"))) {
            Future<BsonDocument> held = threads.submit(() -> docs.find(eq("_id", "e")).first());
            find.awaitHeld(WAIT);
            for (int i = 0; i < 2 * EmbeddedMongo.SERVER_THREADS; i++) {   // more than the server has threads
                try (MongoClient passing = MongoClients.create(mongo.connectionString())) {
                    assertThat(passing.getDatabase("pauses").getCollection("docs", BsonDocument.class).find().first())
                            .as("client " + i).isNotNull();
                }
            }
            find.release();
            assertThat(held.get(WAIT.toSeconds(), TimeUnit.SECONDS)).isNotNull();
        }
    }

    @Test
    void waiting_for_a_command_that_never_comes_fails_naming_the_point() {
        try (Pause pause = mongo.pause(PausePoint.before("delete", "docs"))) {
            assertThatThrownBy(() -> pause.awaitHeld(Duration.ofMillis(200)))
                    .isInstanceOf(IllegalStateException.class)
                    .hasMessageContaining("no command was held before delete on docs");
        }
    }

    @Test
    void a_held_command_goes_on_by_itself_after_its_limit_and_says_so() throws Exception {
        try (Pause update = mongo.pause(PausePoint.before("update", "docs").withHoldAtMost(Duration.ofMillis(300)))) {
            docs.updateOne(eq("_id", "e"), set("n", 3L));   // held, never released: goes on after 300 ms

            assertThat(update.isHeld()).isTrue();
            assertThat(update.timedOut()).isTrue();
        }
        assertThat(n()).isEqualTo(3);
    }

    @Test
    void a_command_whose_server_thread_serves_another_connection_is_not_held() {
        List<MongoClient> others = new ArrayList<>();
        try {
            // more connections than the server has threads: some thread serves two
            for (int i = 0; i < EmbeddedMongo.SERVER_THREADS; i++) {
                MongoClient other = MongoClients.create(mongo.connectionString());
                other.getDatabase("pauses").getCollection("docs", BsonDocument.class).find().first();
                others.add(other);
            }
            try (MongoClient late = MongoClients.create(mongo.connectionString());
                 Pause find = mongo.pause(PausePoint.before("find", "docs"))) {
                late.getDatabase("pauses").getCollection("docs", BsonDocument.class).find().first();   // not held

                assertThatThrownBy(() -> find.awaitHeld(WAIT))
                        .isInstanceOf(IllegalStateException.class)
                        .hasMessageContaining("also serves")
                        .hasMessageContaining("a server of the test's own");
            }
        } finally {
            others.forEach(MongoClient::close);
        }
    }

    @Test
    void a_point_refuses_a_field_it_cannot_use() {
        assertThatThrownBy(() -> new PausePoint(PausePoint.When.WHILE_REPLYING, "find", "docs", c -> true, "",
                PausePoint.DEFAULT_HOLD)).isInstanceOf(IllegalArgumentException.class).hasMessageContaining("afterField");
        assertThatThrownBy(() -> PausePoint.before(" ", "docs")).hasMessageContaining("command must name a command");
    }

    private long n() {
        return docs.find(eq("_id", "e")).first().getInt64("n").getValue();
    }
}
