package dev.orderless.backends;

import static com.mongodb.client.model.Filters.eq;
import static com.mongodb.client.model.Updates.set;
import static org.assertj.core.api.Assertions.assertThat;

import com.mongodb.ConnectionString;
import com.mongodb.MongoClientSettings;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.MongoDatabase;
import dev.orderless.testing.FailPoint;
import java.time.Duration;
import java.util.UUID;
import org.bson.BsonArray;
import org.bson.BsonDocument;
import org.bson.BsonInt32;
import org.bson.BsonString;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The embedded server's {@code failCommand} as a {@code mongod} answers it, where the two could differ unseen: the
 * fail point fires only where MongoDB's does (a write concern error only on a command that takes a write concern; a
 * fail point that does nothing to a command neither counts it nor spends a {@code times}), and a write concern error
 * is the document the test gave, as MongoDB appends it.
 */
class FailPointsTest {
    private static EmbeddedMongo mongo;
    private static MongoClient admin;
    private MongoClient client;
    private MongoDatabase db;
    private String app;

    @BeforeAll
    static void start() {
        mongo = EmbeddedMongo.start();
        admin = MongoClients.create(mongo.connectionString());
    }

    @AfterAll
    static void stop() {
        admin.close();
        mongo.close();
    }

    @BeforeEach
    void aClientOfItsOwn() {
        app = "fp-" + UUID.randomUUID().toString().substring(0, 8);
        client = MongoClients.create(MongoClientSettings.builder()
                .applyConnectionString(new ConnectionString(mongo.connectionString())).applicationName(app).build());
        db = client.getDatabase("failpoints");
        db.getCollection("docs").drop();
        db.getCollection("docs", BsonDocument.class).insertOne(new BsonDocument("_id", new BsonString("a")));
    }

    @org.junit.jupiter.api.AfterEach
    void close() {
        client.close();
    }

    @Test
    void a_write_concern_error_is_the_document_the_fail_point_was_given_as_mongodb_appends_it() {
        BsonDocument given = new BsonDocument("code", new BsonInt32(91));   // no errmsg, no codeName
        try (FailPoint ignored = FailPoint.arm(admin, FailPoint.FAIL_COMMAND, new BsonDocument("times",
                new BsonInt32(1)), new FailPoint.Data(new BsonDocument("failCommands",
                new BsonArray(java.util.List.of(new BsonString("update"))))
                .append("writeConcernError", given).append("appName", new BsonString(app))))) {
            BsonDocument reply = db.runCommand(new BsonDocument("update", new BsonString("docs"))
                    .append("updates", new BsonArray(java.util.List.of(new BsonDocument("q", new BsonDocument("_id",
                            new BsonString("a"))).append("u", new BsonDocument("$set", new BsonDocument("v",
                            new BsonInt32(1))))))), BsonDocument.class);
            assertThat(reply.getDocument("writeConcernError")).isEqualTo(given);
        }
    }

    @Test
    void a_write_concern_error_fail_point_passes_over_a_command_that_takes_no_write_concern() {
        try (FailPoint point = FailPoint.times(admin, 1, FailPoint.Data.failing("find", "update")
                .withWriteConcernError(91).forApp(app))) {
            BsonDocument reply = db.runCommand(new BsonDocument("find", new BsonString("docs")), BsonDocument.class);
            assertThat(reply.containsKey("writeConcernError")).as("a find has no write concern: %s", reply).isFalse();
            BsonDocument update = db.runCommand(new BsonDocument("update", new BsonString("docs"))
                    .append("updates", new BsonArray(java.util.List.of(new BsonDocument("q", new BsonDocument("_id",
                            new BsonString("a"))).append("u", new BsonDocument("$set", new BsonDocument("v",
                            new BsonInt32(1))))))), BsonDocument.class);
            assertThat(update.containsKey("writeConcernError")).as("the one time is the update's").isTrue();
            point.awaitEntered(1, Duration.ofSeconds(5));
        }
    }

    @Test
    void a_fail_point_that_does_nothing_to_a_command_does_not_count_it_entered() {
        long before = off();
        try (FailPoint ignored = FailPoint.times(admin, 1, FailPoint.Data.failing("update").forApp(app))) {
            db.getCollection("docs", BsonDocument.class).updateOne(eq("_id", "a"), set("v", 1));
        }
        assertThat(off()).as("entered by an update it did nothing to").isEqualTo(before);
    }

    /** Turns failCommand off; its count of times entered so far. */
    private static long off() {
        return admin.getDatabase("admin").runCommand(new BsonDocument("configureFailPoint",
                new BsonString(FailPoint.FAIL_COMMAND)).append("mode", new BsonString("off")), BsonDocument.class)
                .getNumber("count").longValue();
    }
}
