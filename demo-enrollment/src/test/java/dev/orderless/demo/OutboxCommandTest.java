package dev.orderless.demo;

import static org.assertj.core.api.Assertions.assertThat;

import com.mongodb.client.MongoCollection;
import com.mongodb.client.MongoDatabase;
import dev.orderless.backends.MongoBackend;
import dev.orderless.testing.MongoExtension;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import org.bson.BsonBinary;
import org.bson.BsonDateTime;
import org.bson.BsonDocument;
import org.bson.BsonInt64;
import org.bson.BsonObjectId;
import org.bson.BsonString;
import org.bson.types.ObjectId;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/** {@code outbox} and {@code outbox parked list|retry|purge}, as an operator uses them: MongoDB only. */
@ExtendWith(MongoExtension.class)
class OutboxCommandTest {

    @Test
    void parked_entries_are_listed_with_their_ids_and_reasons_then_retried_and_purged(MongoBackend mongo,
                                                                                       MongoDatabase db) {
        MongoCollection<BsonDocument> outbox = db.getCollection(Enrollment.OUTBOX, BsonDocument.class);
        ObjectId first = parked(outbox, "student-1", "its message could not be sent 3 times");
        parked(outbox, "student-2", "not an operation: unexpected end of input");
        outbox.insertOne(new BsonDocument("_id", new BsonString("by-hand")).append("due",   // no entity, no seq
                new BsonDateTime(java.time.Instant.parse("9999-01-01T00:00:00Z").toEpochMilli())));
        outbox.insertOne(new BsonDocument("_id", new BsonObjectId(new ObjectId())).append("entity", new BsonString("s3"))
                .append("seq", new BsonInt64(1)).append("body", new BsonBinary(new byte[0]))
                .append("due", new BsonDateTime(System.currentTimeMillis())));
        Map<String, String> env = Map.of("MONGODB_URI", mongo.connectionString());
        String database = db.getName();

        assertThat(CliRun.of(env, "outbox", "--database", database).out()).contains("waiting=1").contains("parked=3");
        CliRun list = CliRun.of(env, "outbox", "parked", "--database", database);
        assertThat(list.exit()).as(list.err()).isZero();
        assertThat(list.out()).contains("PARKED 3 in 'outbox'").contains("\"by-hand\"  seq 0")
                .contains(first.toHexString() + " student-1 seq 1").contains("its message could not be sent 3 times")
                .contains("student-2 seq 1").contains("not an operation");

        assertThat(CliRun.of(env, "outbox", "parked", "retry", "--id", first.toHexString(), "--database", database).out())
                .contains("RETRIED 1");
        assertThat(CliRun.of(env, "outbox", "parked", "purge", "--id", "\"by-hand\"", "--database", database).out())
                .contains("PURGED 1");
        assertThat(CliRun.of(env, "outbox", "--database", database).out()).contains("waiting=2").contains("parked=1");
        assertThat(CliRun.of(env, "outbox", "parked", "purge", "--all", "--database", database).out())
                .contains("PURGED 1");
        assertThat(outbox.countDocuments()).isEqualTo(2);
    }

    @Test
    void retry_and_purge_need_the_entries_named_or_all_and_a_bad_id_is_one_line(MongoBackend mongo) {
        Map<String, String> env = Map.of("MONGODB_URI", mongo.connectionString());

        CliRun bare = CliRun.of(env, "outbox", "parked", "purge");
        assertThat(bare.exit()).isEqualTo(2);
        assertThat(bare.errLines()).containsExactly("error: outbox parked purge needs either --id ID (repeatable) or --all");
        CliRun badId = CliRun.of(env, "outbox", "parked", "retry", "--id", "nope");
        assertThat(badId.exit()).isEqualTo(2);
        assertThat(badId.errLines()).containsExactly("error: 'nope' is not an outbox entry id (24 hex characters, as 'parked list' shows them)");
    }

    private static ObjectId parked(MongoCollection<BsonDocument> outbox, String entity, String reason) {
        ObjectId id = new ObjectId();
        outbox.insertOne(new BsonDocument("_id", new BsonObjectId(id)).append("entity", new BsonString(entity))
                .append("seq", new BsonInt64(1)).append("body", new BsonBinary("{}".getBytes(StandardCharsets.UTF_8)))
                .append("due", new BsonDateTime(java.time.Instant.parse("9999-01-01T00:00:00Z").toEpochMilli()))
                .append("error", new BsonString(reason)).append("parkedAt", new BsonDateTime(System.currentTimeMillis())));
        return id;
    }
}
