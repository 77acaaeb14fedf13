package dev.orderless.outbox;

import static org.assertj.core.api.Assertions.assertThat;

import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.MongoCollection;
import dev.orderless.apply.Operation;
import dev.orderless.backends.EmbeddedMongo;
import dev.orderless.backends.Pause;
import dev.orderless.backends.PausePoint;
import dev.orderless.message.Envelope;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.bson.BsonDocument;
import org.bson.BsonInt32;
import org.bson.BsonValue;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The relays' claim decides from a read: it reads the due entries, then claims them with an
 * {@code updateMany} guarded by {@code due <= now}, and keeps only those its own claim took. Two relays,
 * each with a client of its own, are forced into the interleavings that decide who publishes what; a relay
 * publishes exactly the batch its claim returns, so each entry must be in exactly one relay's batch.
 */
class OutboxClaimInterleavingsTest {
    private static final Duration WAIT = Duration.ofSeconds(10);
    private static final Duration CLAIM_TTL = Duration.ofMinutes(1);
    private static final Instant NOW = Instant.now().truncatedTo(ChronoUnit.MILLIS);

    private static EmbeddedMongo mongo;   // a server of its own: a held command holds no other test's connection
    private static MongoClient clientA;
    private static MongoClient clientB;
    private static ExecutorService threads;
    private final Envelope envelope = new Envelope();
    private OutboxStore relayA;
    private OutboxStore relayB;

    @BeforeAll
    static void start() {
        mongo = EmbeddedMongo.start();
        clientA = MongoClients.create(mongo.connectionString());
        clientB = MongoClients.create(mongo.connectionString());
        threads = Executors.newCachedThreadPool();
    }

    @AfterAll
    static void stop() {
        threads.shutdownNow();
        clientA.close();
        clientB.close();
        mongo.close();
    }

    @BeforeEach
    void anEmptyOutbox() {
        MongoCollection<BsonDocument> entries = clientA.getDatabase("outbox_claims").getCollection("outbox",
                BsonDocument.class);
        entries.drop();
        relayA = new OutboxStore(entries);
        relayB = new OutboxStore(clientB.getDatabase("outbox_claims").getCollection("outbox", BsonDocument.class));
    }

    /**
     * Relay a reads five due entries, and its reply is held after the read ran; relay b claims all five
     * meanwhile. a's claim then matches none of them (b made them due a claim ttl later): a's batch is empty,
     * and none is published twice.
     */
    @Test
    void a_relay_whose_read_of_due_entries_is_held_while_another_claims_them_claims_none_of_them() throws Exception {
        List<BsonValue> recorded = record(5);

        // a read all five as due; the answer has not reached it when b claims
        Batches batches = bClaimsWhileAIsHeld(PausePoint.after("find", "outbox"), 10, 10);

        assertThat(ids(batches.b())).containsExactlyElementsOf(recorded);
        assertThat(ids(batches.a())).as("a's batch: it read them all as due, b claimed them first").isEmpty();
        assertThat(storedClaims()).as("each entry's claim, and its claims so far")
                .isEqualTo(claims(recorded, "b:1", "b:1", "b:1", "b:1", "b:1"));
    }

    /**
     * Relay a reads six due entries, and its claim of them is held before it runs; relay b, with a batch of
     * two, claims the two oldest meanwhile. a's claim then takes the four b left, and a's batch is those four
     * alone: each entry is in exactly one batch.
     */
    @Test
    void a_relay_whose_claim_is_held_while_another_claims_part_of_its_entries_keeps_only_the_others() throws Exception {
        List<BsonValue> recorded = record(6);

        // a read all six as due; its claim is at the server's door when b claims the two oldest
        Batches batches = bClaimsWhileAIsHeld(PausePoint.before("update", "outbox"), 6, 2);

        assertThat(ids(batches.b())).containsExactlyElementsOf(recorded.subList(0, 2));
        assertThat(ids(batches.a())).containsExactlyInAnyOrderElementsOf(recorded.subList(2, 6));
        assertThat(storedClaims()).as("each entry's claim, and its claims so far")
                .isEqualTo(claims(recorded, "b:1", "b:1", "a:1", "a:1", "a:1", "a:1"));
    }

    private record Batches(List<BsonDocument> a, List<BsonDocument> b) {
    }

    /**
     * Relay a claims up to {@code batchA} entries, and its claim is held at {@code point}; relay b claims up to
     * {@code batchB} meanwhile; then a's claim goes on. The batch each claimed, which is what each publishes.
     */
    private Batches bClaimsWhileAIsHeld(PausePoint point, int batchA, int batchB) throws Exception {
        Future<List<BsonDocument>> claimA;
        List<BsonDocument> claimedByB;
        try (Pause heldA = mongo.pause(point)) {
            claimA = threads.submit(() -> relayA.claim("a:1", batchA, NOW, NOW.plus(CLAIM_TTL)));
            heldA.awaitHeld(WAIT);
            claimedByB = relayB.claim("b:1", batchB, NOW, NOW.plus(CLAIM_TTL));
            heldA.release();
        }
        return new Batches(claimA.get(WAIT.toSeconds(), TimeUnit.SECONDS), claimedByB);
    }

    /** Records {@code n} entries, due one second apart up to {@link #NOW}, oldest first; their ids in that order. */
    private List<BsonValue> record(int n) {
        for (int i = 0; i < n; i++) {
            Operation op = Operation.delete("student-" + i, 100 + i);
            relayA.insert(op, envelope.encode(op), NOW.minusSeconds(n - i));
        }
        List<BsonValue> ids = new ArrayList<>();
        relayA.collection().find().sort(new BsonDocument(OutboxStore.DUE, new BsonInt32(1)))
                .forEach(d -> ids.add(d.get(OutboxStore.ID)));
        return ids;
    }

    /** Every stored entry: its claim token and how many times it was claimed. */
    private Map<String, String> storedClaims() {
        Map<String, String> claims = new TreeMap<>();
        relayA.collection().find().forEach(d -> claims.put(d.get(OutboxStore.ID).toString(),
                d.getString(OutboxStore.CLAIM).getValue() + " x" + d.getNumber(OutboxStore.TRIES).intValue()));
        return claims;
    }

    private static Map<String, String> claims(List<BsonValue> ids, String... tokens) {
        Map<String, String> claims = new TreeMap<>();
        for (int i = 0; i < ids.size(); i++) {
            claims.put(ids.get(i).toString(), tokens[i] + " x1");
        }
        return claims;
    }

    private static List<BsonValue> ids(List<BsonDocument> batch) {
        return batch.stream().map(d -> d.get(OutboxStore.ID)).toList();
    }
}
