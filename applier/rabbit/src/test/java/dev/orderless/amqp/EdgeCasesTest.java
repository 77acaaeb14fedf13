package dev.orderless.amqp;

import static com.mongodb.client.model.Filters.eq;
import static org.assertj.core.api.Assertions.assertThat;

import com.mongodb.ConnectionString;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.MongoDatabase;
import com.mongodb.client.model.Collation;
import com.mongodb.client.model.CollationStrength;
import com.mongodb.client.model.CreateCollectionOptions;
import com.mongodb.client.model.IndexOptions;
import com.mongodb.client.model.Indexes;
import dev.orderless.Backoff;
import dev.orderless.InvalidConfigurationException;
import dev.orderless.consume.internal.ConsumerMetrics;
import dev.orderless.consume.internal.DeadLetterFields;
import dev.orderless.apply.CollectionSchema;
import dev.orderless.apply.GuardedApplier;
import dev.orderless.apply.Outcome;
import dev.orderless.apply.SetField;
import dev.orderless.backends.KnownDifference;
import dev.orderless.backends.MongoBackend;
import dev.orderless.testing.MongoExtension;
import dev.orderless.testing.rabbit.RabbitExtension;
import dev.orderless.testing.TcpProxy;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Consumer;
import org.awaitility.Awaitility;
import org.bson.BsonArray;
import org.bson.BsonDocument;
import org.bson.BsonInt64;
import org.bson.BsonString;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.amqp.core.Message;
import org.springframework.amqp.rabbit.connection.ConnectionFactory;
import org.springframework.amqp.rabbit.core.RabbitTemplate;

/**
 * Every input or state class the consumer cannot simply apply, each published with a good message right
 * behind it, then published again (a redelivery): each ends applied, stale or dead-lettered with its
 * reason, within the hold bound, and the good message behind it is applied. Prints the {@code [edges]}
 * table. MongoDB is reached through a {@link TcpProxy}, so one case can drop every connection that carries
 * one entity's writes while all other operations succeed.
 */
@ExtendWith({MongoExtension.class, RabbitExtension.class})
class EdgeCasesTest {
    private static final CollectionSchema SCHEMA = CollectionSchema.builder()
            .set(SetField.of("classes", "name")).register("name").register("email").build();
    private static final Duration MAX_HOLD = Duration.ofSeconds(2);
    private static final Duration RETRY_MAX = Duration.ofMillis(500);
    /** The hold bound: maxHold, one pause, and one apply's worth of slack. */
    private static final Duration BOUND = MAX_HOLD.plus(RETRY_MAX).plusSeconds(10);
    private static final int MAX_BYTES = 512 * 1024;
    private static final int SIXTEEN_MB = 16 * 1024 * 1024;
    private static final String NET_FAULT_ENTITY = "netfault-7f3a";

    private TcpProxy proxy;
    private MongoClient client;
    private MongoCollection<BsonDocument> direct;
    private MongoCollection<BsonDocument> proxied;
    private MongoBackend backend;

    /** One case: what it sets up, what it publishes, and what must become of it. */
    record Case(String name, Consumer<MongoCollection<BsonDocument>> setup, byte[] body, String expected,
                String reasonContains) {
    }

    /** What became of one delivery. */
    record Result(String outcome, String reason, long heldMillis, boolean goodApplied) {
    }

    @BeforeEach
    void connectThroughAProxy(MongoBackend backend, MongoDatabase fresh) {
        this.backend = backend;
        var target = new ConnectionString(backend.connectionString()).getHosts().get(0).split(":");
        proxy = TcpProxy.start(target[0], target.length > 1 ? Integer.parseInt(target[1]) : 27017);
        client = MongoClients.create("mongodb://127.0.0.1:" + proxy.port()
                + "/?directConnection=true&serverSelectionTimeoutMS=2000&connectTimeoutMS=2000&socketTimeoutMS=20000");
        direct = fresh.getCollection("edges", BsonDocument.class);
        proxied = client.getDatabase(fresh.getName()).getCollection("edges", BsonDocument.class);
    }

    @AfterEach
    void disconnect() {
        client.close();
        proxy.close();
    }

    @Test
    void every_edge_ends_applied_stale_or_dead_lettered_within_the_bound_and_the_message_behind_it_is_applied(
            ConnectionFactory cf, MongoDatabase fresh) throws Exception {
        List<Case> cases = cases();
        GuardedApplier applier = GuardedApplier.create(proxied, SCHEMA);
        try (ConsumerFixture fixture = new ConsumerFixture(cf, proxied, "edges")) {
            fixture.start(applier, ConsumerOptions.ofDefaults(fixture.queue)
                    .withMaxMessageBytes(MAX_BYTES).withBackoff(Backoff.of(Duration.ofMillis(50), RETRY_MAX)).withMaxHold(MAX_HOLD));
            RabbitTemplate template = new RabbitTemplate(cf);
            System.out.printf("[edges] %d cases on %s, maxHold %d s, bound %d s%n", cases.size(),
                    backend.description(), MAX_HOLD.toSeconds(), BOUND.toSeconds());
            System.out.printf("[edges] %-52s %-10s %-14s %8s  %-5s %s%n", "case", "delivery", "outcome", "held",
                    "good", "reason");
            int held = 0;
            int good = 0;
            List<Result> results = new ArrayList<>();
            for (int i = 0; i < cases.size(); i++) {
                Case c = cases.get(i);
                c.setup().accept(direct);
                for (int delivery = 1; delivery <= 2; delivery++) {
                    Result r = deliver(fixture, template, c.body(), "good-" + i + "-" + delivery);
                    results.add(r);
                    System.out.printf("[edges] %-52s %-10s %-14s %6d ms  %-5s %s%n", c.name(),
                            delivery == 1 ? "first" : "redelivery", r.outcome(), r.heldMillis(),
                            r.goodApplied() ? "yes" : "NO", r.reason());
                    String expected = delivery == 2 && c.expected().equals("applied") ? "stale" : c.expected();
                    assertThat(r.outcome()).as(c.name() + ", delivery " + delivery).isEqualTo(expected);
                    if (!c.reasonContains().isEmpty()) {
                        assertThat(r.reason()).as(c.name()).contains(c.reasonContains());
                    }
                    assertThat(r.goodApplied()).as("the good message behind " + c.name()).isTrue();
                    held += r.heldMillis() > BOUND.toMillis() ? 1 : 0;
                    good += r.goodApplied() ? 1 : 0;
                }
            }
            String collation = collationAtStartUp(fresh);
            System.out.printf("[edges] %-52s %-10s %s%n", "collection with a case-insensitive collation", "start-up",
                    collation);
            long deadLettered = results.stream().filter(r -> !r.reason().isEmpty()).count();
            System.out.printf("[edges] summary: %d deliveries of %d cases: %d applied, %d stale, %d dead-lettered with"
                            + " a reason; %d held past the bound of %d s (longest %d ms); %d of %d good messages behind"
                            + " them applied%n", results.size(), cases.size(),
                    results.stream().filter(r -> r.outcome().equals("applied")).count(),
                    results.stream().filter(r -> r.outcome().equals("stale")).count(), deadLettered, held,
                    BOUND.toSeconds(), results.stream().mapToLong(Result::heldMillis).max().orElse(0), good,
                    results.size());
            assertThat(held).isZero();
            assertThat(good).isEqualTo(results.size());
            fixture.awaitEmpty(fixture.queue);
        }
    }

    private Result deliver(ConsumerFixture fixture, RabbitTemplate template, byte[] body, String goodEntity)
            throws Exception {
        double[] before = counts(fixture);
        long start = System.nanoTime();
        fixture.publishRaw(List.of(body, json("{'entity':'" + goodEntity + "','seq':1,'op':'assign','field':'name',"
                + "'value':'ok'}")));
        Awaitility.await(goodEntity).atMost(BOUND).pollInterval(Duration.ofMillis(10))
                .until(() -> total(counts(fixture)) - total(before) >= 2);
        long heldMillis = Duration.ofNanos(System.nanoTime() - start).toMillis();
        double[] after = counts(fixture);
        String outcome;
        String reason = "";
        if (after[0] - before[0] >= 2) {
            outcome = "applied";
        } else if (after[1] - before[1] >= 1) {
            outcome = "stale";
        } else {
            outcome = deadLetterReasonTag(fixture, before, after);
            Message m = template.receive(fixture.deadLetterQueue, 10_000);
            assertThat(m).as("a dead letter for " + outcome).isNotNull();
            reason = String.valueOf(m.getMessageProperties().getHeaders().get(DeadLetterFields.REASON));
        }
        BsonDocument stored = direct.find(eq("_id", goodEntity)).first();
        boolean goodApplied = stored != null && stored.getString("name", new BsonString("")).getValue().equals("ok");
        return new Result(outcome, reason, heldMillis, goodApplied);
    }

    /** [applied, stale, dead-lettered by reason...]. */
    private static double[] counts(ConsumerFixture f) {
        ConsumerMetrics.DeadLetterReason[] reasons = ConsumerMetrics.DeadLetterReason.values();
        double[] c = new double[2 + reasons.length];
        c[0] = f.count("orderless.consume.outcomes", "outcome", Outcome.APPLIED.tag());
        for (Outcome o : Outcome.values()) {
            c[1] += o.isStale() ? f.count("orderless.consume.outcomes", "outcome", o.tag()) : 0;
        }
        for (int i = 0; i < reasons.length; i++) {
            c[2 + i] = f.count("orderless.consume.dead_lettered", "reason", tag(reasons[i]));
        }
        return c;
    }

    private static String deadLetterReasonTag(ConsumerFixture f, double[] before, double[] after) {
        ConsumerMetrics.DeadLetterReason[] reasons = ConsumerMetrics.DeadLetterReason.values();
        for (int i = 0; i < reasons.length; i++) {
            if (after[2 + i] > before[2 + i]) {
                return tag(reasons[i]);
            }
        }
        return "none";
    }

    private static String tag(ConsumerMetrics.DeadLetterReason reason) {
        return reason.name().toLowerCase(java.util.Locale.ROOT);
    }

    private static double total(double[] counts) {
        double sum = 0;
        for (double c : counts) {
            sum += c;
        }
        return sum;
    }

    private String collationAtStartUp(MongoDatabase fresh) {
        if (backend.knownDifferences().contains(KnownDifference.NO_COLLATION)) {
            return "skipped: this backend ignores collations (KnownDifference NO_COLLATION)";
        }
        fresh.createCollection("folded", new CreateCollectionOptions().collation(
                Collation.builder().locale("en").collationStrength(CollationStrength.SECONDARY).build()));
        try {
            GuardedApplier.create(fresh.getCollection("folded", BsonDocument.class), SCHEMA);
        } catch (InvalidConfigurationException e) {
            return "refused: " + e.getMessage();
        }
        throw new AssertionError("an applier was created on a collection with a case-insensitive collation");
    }

    private List<Case> cases() {
        boolean sizeLimit = !backend.knownDifferences().contains(KnownDifference.NO_DOCUMENT_SIZE_LIMIT);
        Consumer<MongoCollection<BsonDocument>> none = c -> { };
        List<Case> cases = new ArrayList<>();
        cases.add(new Case("truncated JSON", none, json("{'entity':'e1','seq':1,'op':'del"), "bad_input", "not JSON"));
        cases.add(new Case("invalid UTF-8 bytes", none, new byte[] {'{', '"', (byte) 0xC3, (byte) 0x28, '"', ':', '1', '}'},
                "bad_input", "not JSON"));
        cases.add(new Case("empty body", none, new byte[0], "bad_input", "not a JSON object"));
        cases.add(new Case("a JSON string, not an object", none, json("'student-1'"), "bad_input", "not a JSON object"));
        cases.add(new Case("duplicated member", none, json("{'entity':'e1','seq':1,'seq':2,'op':'delete'}"),
                "bad_input", "member 'seq' appears twice (entity 'e1')"));
        cases.add(new Case("seq past 64 bits", none, json("{'entity':'e1','seq':99999999999999999999,'op':'delete'}"),
                "bad_input", "'seq' must be a whole number"));
        cases.add(new Case("value integer past 64 bits", none, assign("e1", "123456789012345678901234567890"),
                "bad_input", "does not fit in 64 bits"));
        cases.add(new Case("JSON nested 5000 deep", none, assign("e1", "[".repeat(5000) + "]".repeat(5000)),
                "bad_input", "not JSON"));
        cases.add(new Case("value nested 40 deep", none, assign("e1", "{'a':".repeat(40) + "1" + "}".repeat(40)),
                "bad_input", "nested deeper than 32 levels"));
        cases.add(new Case("lone surrogate in the entity id", none,
                json("{'entity':'e\\\\ud800','seq':1,'op':'delete'}"), "bad_input", "lone UTF-16 surrogate"));
        cases.add(new Case("lone surrogate in a value", none, assign("e1", "'a\\\\udc00b'"), "bad_input",
                "lone UTF-16 surrogate"));
        cases.add(new Case("NUL in a nested name", none, assign("e1", "{'a\\\\u0000b':1}"), "bad_input", "NUL"));
        cases.add(new Case("nested name starting with $", none, assign("e1", "{'$where':1}"), "bad_input",
                "starts with '$'"));
        cases.add(new Case("nested name with a dot", none, assign("e1", "{'a.b':1}"), "bad_input", "contains '.'"));
        cases.add(new Case("body past maxMessageBytes", none, assign("e1", "'" + "x".repeat(MAX_BYTES) + "'"),
                "oversized", "oversized"));
        cases.add(new Case("unique secondary index, new entity", c -> {
            c.createIndex(Indexes.ascending("email"), new IndexOptions().unique(true).sparse(true));
            c.insertOne(doc("owner").append("email", new BsonString("taken@example.com")));
        }, json("{'entity':'u-new','seq':1,'op':'assign','field':'email','value':'taken@example.com'}"),
                "no_progress", "unique index 'email_1'"));
        cases.add(new Case("unique secondary index, existing entity",
                c -> c.insertOne(doc("u-old").append("_v", new BsonInt64(1)).append("email", new BsonString("old@x"))),
                json("{'entity':'u-old','seq':2,'op':'assign','field':'email','value':'taken@example.com'}"),
                "no_progress", "unique index 'email_1'"));
        cases.add(new Case("stored entry with a string seq (read as 0)",
                c -> c.insertOne(doc("f-seq").append("_v", new BsonInt64(1)).append("classes", new BsonArray(List.of(
                        new BsonDocument("name", new BsonString("CS 101")).append("seq", new BsonString("7")))))),
                json("{'entity':'f-seq','seq':9,'op':'add','field':'classes','element':'CS 101'}"),
                "applied", ""));
        cases.add(new Case("stored entry with an array seq",
                c -> c.insertOne(doc("f-aseq").append("_v", new BsonInt64(1)).append("classes", new BsonArray(List.of(
                        new BsonDocument("name", new BsonString("CS 101")).append("seq",
                                new BsonArray(List.of(new BsonInt64(100)))))))),
                json("{'entity':'f-aseq','seq':9,'op':'add','field':'classes','element':'CS 101'}"),
                "no_progress", "refresh write"));
        cases.add(new Case("stored _v of another type",
                c -> c.insertOne(doc("f-v").append("_v", new BsonString("x"))),
                json("{'entity':'f-v','seq':5,'op':'delete'}"), "no_progress", "delete write"));
        cases.add(new Case("stored set that is a string",
                c -> c.insertOne(doc("f-set").append("classes", new BsonString("oops"))),
                json("{'entity':'f-set','seq':3,'op':'add','field':'classes','element':'CS 101'}"),
                "no_progress", "is a string, not an array, which orderless cannot read"));
        cases.add(new Case("document at the 16 MB limit grows" + (sizeLimit ? "" : " (no limit here)"),
                c -> c.insertOne(doc("big").append("_v", new BsonInt64(1))
                        .append("blob", new BsonString("b".repeat(SIXTEEN_MB - 100_000)))),
                json("{'entity':'big','seq':3,'op':'add','field':'classes','element':'CS 101','attrs':{'notes':'"
                        + "n".repeat(300_000) + "'}}"), sizeLimit ? "too_large" : "applied", sizeLimit ? "16 MB" : ""));
        cases.add(new Case("delete of a 15 MB document", c -> c.insertOne(huge("huge")),
                json("{'entity':'huge','seq':5000,'op':'delete'}"), "applied", ""));
        cases.add(new Case("delete of 70,000 small entries", c -> c.insertOne(many("many")),
                json("{'entity':'many','seq':80000,'op':'delete'}"), "applied", ""));
        cases.add(new Case("connection dropped on every write of one entity",
                c -> proxy.dropWhenClientSends(NET_FAULT_ENTITY),
                json("{'entity':'" + NET_FAULT_ENTITY + "','seq':1,'op':'assign','field':'name','value':'x'}"),
                "held_too_long", "held too long"));
        return cases;
    }

    private static BsonDocument huge(String id) {
        BsonArray classes = new BsonArray();
        for (int i = 0; i < 1500; i++) {
            classes.add(new BsonDocument("name", new BsonString("course-" + i)).append("seq", new BsonInt64(i + 1))
                    .append("notes", new BsonString("n".repeat(10_000))));
        }
        return doc(id).append("_v", new BsonInt64(1500)).append("_floor", new BsonInt64(0))
                .append("_gcFloor", new BsonInt64(0)).append("classes", classes);
    }

    private static BsonDocument many(String id) {
        BsonArray classes = new BsonArray();
        for (int i = 0; i < 70_000; i++) {
            classes.add(new BsonDocument("name", new BsonString(String.format("%0100d", i))).append("seq", new BsonInt64(i + 1)));
        }
        return doc(id).append("_v", new BsonInt64(70_000)).append("classes", classes);
    }

    private static BsonDocument doc(String id) {
        return new BsonDocument("_id", new BsonString(id));
    }

    private static byte[] assign(String entity, String valueJson) {
        return json("{'entity':'" + entity + "','seq':1,'op':'assign','field':'name','value':" + valueJson + "}");
    }

    /** JSON written with single quotes, for readability; a backslash escape is written doubled. */
    private static byte[] json(String singleQuoted) {
        return singleQuoted.replace('\'', '"').replace("\\\\", "\\").getBytes(StandardCharsets.UTF_8);
    }
}
