package dev.orderless.chaos;

import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.model.Projections;
import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.Channel;
import dev.orderless.consume.internal.DeadLetterFields;
import dev.orderless.backends.MongoBackend;
import dev.orderless.broker.QueueTopology;
import dev.orderless.testing.rabbit.RabbitExtension;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import org.awaitility.Awaitility;
import org.bson.BsonDocument;
import org.springframework.amqp.rabbit.connection.Connection;
import org.springframework.amqp.rabbit.connection.ConnectionFactory;
import org.springframework.amqp.rabbit.core.RabbitAdmin;

/**
 * A flood of poison messages as a console meets it: a work queue and its dead-letter queue of their own, letters
 * published into the dead-letter queue as orderless's consumer dead-letters them (its headers, a letter id each), a
 * console application ({@link ConsoleProcess}) ingesting them into a database of its own, and what the store holds
 * afterwards, read back by letter id: lost (published, not stored) and doubled (stored more than once).
 */
final class LetterFlood implements AutoCloseable {
    /** The console's letters collection (orderless.console.letters.collection's default). */
    static final String LETTERS = "orderless_dead_letters";
    /** The field a stored letter keeps its x-orderless-dead-letter-id in. */
    private static final String LETTER_ID = "letterId";
    private static final Duration WAIT = Duration.ofMinutes(3);

    final String work;
    final String deadLetterQueue;
    private final String name;
    private final ConnectionFactory rabbit;
    private final URI rabbitUri;
    private final MongoBackend mongo;
    private final MongoClient client;
    private final String database;
    private final MongoCollection<BsonDocument> letters;
    private final List<String> published = new ArrayList<>();

    /**
     * @param name     names its queues, database and the console processes' logs
     * @param rabbit   a connection factory to the broker the console uses
     * @param rabbitUri that broker's URI, for the console process
     * @param mongo    the MongoDB the console keeps its letters in
     */
    LetterFlood(String name, ConnectionFactory rabbit, URI rabbitUri, MongoBackend mongo) {
        this.name = name;
        this.work = RabbitExtension.uniqueQueue("console-" + name);
        this.deadLetterQueue = work + ".dlq";
        this.rabbit = rabbit;
        this.rabbitUri = rabbitUri;
        this.mongo = mongo;
        this.client = mongo.newClient();
        this.database = MongoBackend.freshDatabaseName("console_" + name);
        this.letters = client.getDatabase(database).getCollection(LETTERS, BsonDocument.class);
        // the queues as the console's consumer declares them when it starts (classic off RabbitMQ): the letters are
        // published before any console runs, so that ingestion starts from a backlog
        QueueTopology.declare(rabbit, work, deadLetterQueue, QueueTopology.isRabbitMq(rabbit)
                ? QueueTopology.QueueType.QUORUM : QueueTopology.QueueType.CLASSIC, java.util.Optional.empty());
    }

    /**
     * Publishes {@code n} letters into the dead-letter queue on one channel with publisher confirms, every confirm
     * awaited: kinds and reasons as a flood of poison messages has them (most of one kind), one entity each.
     *
     * @return how long it took, from the first publish to the last confirm
     */
    Duration publish(int n) throws Exception {
        try (Connection connection = rabbit.createConnection();
             Channel channel = connection.getDelegate().createChannel()) {
            channel.confirmSelect();
            long t0 = System.nanoTime();
            for (int i = 0; i < n; i++) {
                String[] kind = KINDS[kindOf(published.size())];
                String entity = name + "-student-" + published.size();
                String id = UUID.randomUUID().toString();
                long seq = 1 + published.size() % 97;
                Map<String, Object> headers = new HashMap<>();
                headers.put(DeadLetterFields.REASON, kind[1] + " (entity '" + entity + "', seq " + seq + ")");
                headers.put(DeadLetterFields.REASON_KIND, kind[0]);
                headers.put(DeadLetterFields.ENTITY, entity);
                headers.put(DeadLetterFields.SEQ, seq);
                headers.put(DeadLetterFields.ORIGINAL_QUEUE, work);
                headers.put(DeadLetterFields.DEAD_LETTERED_AT, Instant.now().toString());
                headers.put(DeadLetterFields.LETTER_ID, id);
                headers.put(DeadLetterFields.EXCEPTION_MESSAGE, kind[1]);
                headers.put(DeadLetterFields.ORIGINAL_EXCHANGE, "");
                headers.put(DeadLetterFields.ORIGINAL_ROUTING_KEY, work);
                AMQP.BasicProperties props = new AMQP.BasicProperties.Builder().headers(headers).deliveryMode(2)
                        .contentType("application/json").messageId(UUID.randomUUID().toString()).build();
                byte[] body = ("{\"entity\":\"" + entity + "\",\"seq\":" + seq + ",\"op\":\"add\",\"field\":\"classes\""
                        + ",\"element\":\"class-" + (i % 40) + "\",\"attributes\":{\"name\":\"Class " + (i % 40) + "\"}}")
                        .getBytes(StandardCharsets.UTF_8);
                channel.basicPublish("", deadLetterQueue, props, body);
                published.add(id);
            }
            channel.waitForConfirmsOrDie(WAIT.toMillis());
            return Duration.ofNanos(System.nanoTime() - t0);
        }
    }

    /** Kinds and reasons as a flood of poison messages has them: most of one kind; one kind orderless does not know. */
    private static final String[][] KINDS = {
            {"bad_input", "missing 'seq'"},
            {"bad_input", "op 'add' needs 'element'"},
            {"no_progress", "no progress after 5 deliveries"},
            {"too_large", "the document would exceed MongoDB's 16 MB"},
            {"made_up_kind", "a reason of someone else's"}};
    /** Each kind's share of the letters, in percent. */
    private static final int[] SHARES = {60, 15, 15, 5, 5};

    /** The kind of the {@code index}th letter: the shares spread over every run of 100 letters. */
    private static int kindOf(int index) {
        int slot = (index * 37) % 100;
        int k = 0;
        for (int upTo = SHARES[0]; slot >= upTo; upTo += SHARES[k]) {
            k++;
        }
        return k;
    }

    /** A console application on this flood's queues and database, its log under target/console-letters/. */
    ConsoleProcess console(String label) throws Exception {
        return ConsoleProcess.start(new ConsoleProcess.Target(mongo.connectionString(), rabbitUri.toString(), database,
                work, deadLetterQueue), Path.of("target", "console-letters", name + "-" + label + ".log"));
    }

    /** Letters stored, as MongoDB's collection metadata counts them: cheap enough to poll while letters arrive. */
    long storedRoughly() {
        return letters.estimatedDocumentCount();
    }

    /** Letters stored, counted one by one. */
    long stored() {
        return letters.countDocuments();
    }

    int published() {
        return published.size();
    }

    /** Letters ready in the dead-letter queue (not counting those a consumer holds unacknowledged). */
    long queueReady() {
        return QueueTopology.lookup(rabbit, deadLetterQueue).orElseThrow().getMessageCount();
    }

    /** Waits (at most 3 minutes) until every letter published is stored and none is ready in the queue. */
    void awaitAllStored() {
        Awaitility.await("all " + published.size() + " letters of '" + deadLetterQueue + "' stored")
                .atMost(WAIT).pollInterval(Duration.ofMillis(50))
                .until(() -> storedRoughly() >= published.size() && queueReady() == 0);
    }

    /**
     * What the store holds against what was published, by letter id.
     *
     * @param published letters published
     * @param stored    letters stored
     * @param lost      published and not stored
     * @param doubled   stored beyond one per letter id (a letter stored twice, under two ids)
     * @param strangers stored and never published
     */
    record Verdict(long published, long stored, long lost, long doubled, long strangers) {
    }

    Verdict verdict() {
        List<String> ids = new ArrayList<>();
        letters.find().projection(Projections.include(LETTER_ID)).forEach(doc -> ids.add(
                doc.isString(LETTER_ID) ? doc.getString(LETTER_ID).getValue() : "(none: " + doc.get("_id") + ")"));
        Set<String> distinct = new HashSet<>(ids);
        Set<String> sent = new HashSet<>(published);
        long lost = sent.stream().filter(id -> !distinct.contains(id)).count();
        long strangers = distinct.stream().filter(id -> !sent.contains(id)).count();
        return new Verdict(published.size(), ids.size(), lost, ids.size() - distinct.size(), strangers);
    }

    /**
     * A console killed mid-ingestion: SIGKILLed once it stored at least {@code killAtShare} of the letters (the
     * store's count, polled), then started again until every letter is stored and the queue is empty, then stopped.
     *
     * @param storedAtKill letters stored when the first process was gone
     * @param verdict      the store against what was published, after the second process stopped
     * @param queueAfter   letters left in the dead-letter queue after the second process stopped (held ones returned)
     */
    record Killed(long storedAtKill, Verdict verdict, long queueAfter) {
    }

    Killed killedMidIngestion(double killAtShare) throws Exception {
        long killAt = Math.max(1, Math.round(published.size() * killAtShare));
        long storedAtKill;
        try (ConsoleProcess first = console("killed")) {
            Awaitility.await(killAt + " of " + published.size() + " letters stored before the kill").atMost(WAIT)
                    .pollInterval(Duration.ofMillis(5)).until(() -> storedRoughly() >= killAt);
            first.kill();
            storedAtKill = stored();
        }
        try (ConsoleProcess second = console("restarted")) {
            awaitAllStored();
            second.stop();   // letters it held unacknowledged, if any, go back to the queue: counted below
        }
        return new Killed(storedAtKill, verdict(), queueReady());
    }

    @Override
    public void close() {
        try {
            RabbitAdmin admin = new RabbitAdmin(rabbit);
            admin.deleteQueue(work);
            admin.deleteQueue(deadLetterQueue);
            admin.deleteQueue(QueueTopology.parkingQueue(deadLetterQueue));
        } finally {
            try {
                client.getDatabase(database).drop();
            } finally {
                client.close();
            }
        }
    }
}
