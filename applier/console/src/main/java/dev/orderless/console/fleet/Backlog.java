package dev.orderless.console.fleet;

import dev.orderless.InvalidConfigurationException;
import dev.orderless.OrderlessException;
import dev.orderless.amqp.DeadLetterQueue;
import dev.orderless.broker.QueueTopology;
import dev.orderless.console.ConsoleSources;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.bson.BsonDocument;
import org.springframework.amqp.core.QueueInformation;
import org.springframework.amqp.rabbit.connection.ConnectionFactory;

/**
 * Each work queue's backlog as the broker counts it now: messages ready, consumers attached, and the dead-letter
 * queue's depth, by AMQP (a passive declaration on a channel of its own, as {@link QueueTopology#lookup} tells a queue
 * that is absent from a broker that does not answer); messages delivered and not yet acknowledged from RabbitMQ's
 * management API, only where {@code orderless.console.management-url} names it (AMQP does not tell them).
 *
 * <p>What it guarantees: a queue the broker does not answer for (down, refusing, slower than
 * {@value #ANSWER_SECONDS} s) is a row with an {@code error} in one line, and every other row still answers; stored
 * letters MongoDB does not count (down, slower than that) leave {@code letters} and {@code parked} null with a
 * {@code lettersError}, and the broker's figures still answer; nothing here waits longer than that; the figures are
 * never cached.
 */
public final class Backlog implements AutoCloseable {
    /** How long a row waits for the broker and the management API. */
    static final int ANSWER_SECONDS = 3;
    private static final Duration MANAGEMENT_TIMEOUT = Duration.ofSeconds(2);

    private final List<ConsoleSources.Consumer> consumers;
    private final Optional<URI> management;
    private final String authorization;
    /** Only with a management API: on Java 17 a client's selector thread lives until it is collected. */
    private final Optional<HttpClient> http;
    private final ExecutorService asking;

    /**
     * @param consumers     the consumers whose queues to count
     * @param management    RabbitMQ's management API ({@code http://host:15672}), if unacknowledged counts are wanted
     * @param username      the management API's user (Boot's {@code spring.rabbitmq.username})
     * @param password      its password (Boot's {@code spring.rabbitmq.password})
     * @throws InvalidConfigurationException if a part is missing
     */
    public Backlog(List<ConsoleSources.Consumer> consumers, Optional<URI> management, String username,
                   String password) {
        if (consumers == null || management == null || username == null || password == null) {
            throw InvalidConfigurationException.refused("console backlog", "every part", "must be given");
        }
        this.consumers = List.copyOf(consumers);
        this.management = management;
        this.authorization = "Basic " + Base64.getEncoder().encodeToString((username + ":" + password)
                .getBytes(StandardCharsets.UTF_8));
        this.http = management.map(url -> HttpClient.newBuilder().connectTimeout(MANAGEMENT_TIMEOUT).build());
        // a broker question and a MongoDB question per queue at once, each bounded by the deadline
        this.asking = Executors.newFixedThreadPool(Math.max(4, 2 * this.consumers.size()), task -> {
            Thread thread = new Thread(task, "orderless-console-backlog");
            thread.setDaemon(true);
            return thread;
        });
    }

    /**
     * Each consumer's queue: {@code queue}, {@code ready}, {@code unacked} (null without the management API),
     * {@code consumers}, {@code deadLetterQueue}, {@code deadLetterReady}, {@code letters} and {@code parked} (stored
     * letters, null while {@code letters} knows nothing), {@code error} where the broker did not answer, and
     * {@code lettersError} where MongoDB did not count the stored letters.
     *
     * @param letters the stored letters' figures
     * @return one row per consumer, in the consumers' order
     */
    public List<Map<String, Object>> queues(LetterFigures letters) {
        List<Future<Map<String, Object>>> asked = new ArrayList<>();
        List<Future<Long[]>> stored = new ArrayList<>();
        for (ConsoleSources.Consumer consumer : consumers) {
            asked.add(asking.submit(() -> row(consumer.deadLetters())));
            String workQueue = consumer.deadLetters().workQueue();
            // MongoDB's figures, asked alongside the broker's and bounded alike: a MongoDB that does not answer
            // leaves them null with a line saying why, never the broker's figures or the rest of the page unshown
            stored.add(asking.submit(() -> new Long[] {orNull(letters.dead(workQueue)),
                    orNull(letters.parked(workQueue))}));
        }
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(ANSWER_SECONDS);
        List<Map<String, Object>> rows = new ArrayList<>();
        for (int i = 0; i < consumers.size(); i++) {
            DeadLetterQueue queue = consumers.get(i).deadLetters();
            Map<String, Object> row;
            try {
                row = asked.get(i).get(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
            } catch (TimeoutException e) {
                asked.get(i).cancel(true);
                row = failed(queue, "the broker did not answer within " + ANSWER_SECONDS + " s about queue '"
                        + queue.workQueue() + "': check that it is running and reachable");
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                row = failed(queue, "interrupted while asking the broker about queue '" + queue.workQueue() + "'");
            } catch (java.util.concurrent.ExecutionException e) {
                row = failed(queue, FleetReporter.oneLine(e.getCause()));
            }
            try {
                Long[] figures = stored.get(i).get(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
                row.put("letters", figures[0]);
                row.put("parked", figures[1]);
            } catch (TimeoutException e) {
                stored.get(i).cancel(true);
                row.put("lettersError", "MongoDB did not answer within " + ANSWER_SECONDS + " s about the stored"
                        + " letters of queue '" + queue.workQueue() + "': check that it is up");
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                row.put("lettersError", "interrupted while counting the stored letters of queue '"
                        + queue.workQueue() + "'");
            } catch (java.util.concurrent.ExecutionException e) {
                row.put("lettersError", "the stored letters of queue '" + queue.workQueue() + "' could not be"
                        + " counted (" + FleetReporter.oneLine(e.getCause()) + "): check that MongoDB is up");
            }
            rows.add(row);
        }
        return rows;
    }

    private Map<String, Object> row(DeadLetterQueue queue) {
        Map<String, Object> row = start(queue);
        List<String> errors = new ArrayList<>();
        ConnectionFactory broker = queue.connectionFactory();
        try {
            QueueInformation work = lookup(broker, queue.workQueue());
            row.put("ready", work.getMessageCount());
            row.put("consumers", work.getConsumerCount());
        } catch (OrderlessException e) {
            errors.add(oneLine(e.getMessage()));
        }
        if (errors.isEmpty()) {   // the broker answered: the unacked count is worth asking for
            management.ifPresent(url -> unacked(url, broker.getVirtualHost(), queue.workQueue(), row));
        }
        try {
            row.put("deadLetterReady", lookup(broker, queue.deadLetterQueue()).getMessageCount());
        } catch (OrderlessException e) {
            errors.add(oneLine(e.getMessage()));
        }
        if (!errors.isEmpty()) {
            row.put("error", String.join("; ", errors.stream().distinct().toList()));
        }
        return row;
    }

    /** The queue's counts, or why not: absent, refused, or the broker not answering. */
    private static QueueInformation lookup(ConnectionFactory broker, String queue) {
        return QueueTopology.lookup(broker, queue).orElseThrow(() -> new InvalidConfigurationException("queue '"
                + queue + "' does not exist on the broker: its consumer declares it when it starts; check that it"
                + " started, and the queue's name"));
    }

    /** RabbitMQ's count of the queue's messages delivered and not acknowledged, or {@code unackedError}. */
    private void unacked(URI management, String virtualHost, String queue, Map<String, Object> row) {
        String path = "/api/queues/" + segment(virtualHost == null ? "/" : virtualHost) + "/" + segment(queue);
        URI uri = URI.create(management.toString().replaceAll("/+$", "") + path);
        try {
            HttpResponse<String> answer = http.orElseThrow().send(HttpRequest.newBuilder(uri).timeout(MANAGEMENT_TIMEOUT)
                    .header("Authorization", authorization).header("Accept", "application/json").GET().build(),
                    HttpResponse.BodyHandlers.ofString());
            if (answer.statusCode() != 200) {
                row.put("unackedError", "RabbitMQ's management API at " + management + " answered "
                        + answer.statusCode() + " for queue '" + queue + "'" + (answer.statusCode() == 401
                        ? ": check spring.rabbitmq.username and password, and the user's management tag" : ""));
                return;
            }
            BsonDocument figures = BsonDocument.parse(answer.body());
            // a queue the broker has not yet sampled has no count: unknown, not zero
            row.put("unacked", figures.isNumber("messages_unacknowledged")
                    ? figures.getNumber("messages_unacknowledged").longValue() : null);
        } catch (java.io.IOException | RuntimeException e) {
            row.put("unackedError", "RabbitMQ's management API at " + management + " did not answer for queue '"
                    + queue + "' (" + FleetReporter.oneLine(e) + "): check orderless.console.management-url");
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** A path segment of the management API: '/' (the default virtual host) and every other reserved byte encoded. */
    private static String segment(String text) {
        return URLEncoder.encode(text, StandardCharsets.UTF_8).replace("+", "%20");
    }

    private Map<String, Object> start(DeadLetterQueue queue) {
        Map<String, Object> row = new LinkedHashMap<>();
        row.put("queue", queue.workQueue());
        row.put("ready", null);
        row.put("unacked", null);
        row.put("consumers", null);
        row.put("deadLetterQueue", queue.deadLetterQueue());
        row.put("deadLetterReady", null);
        row.put("letters", null);
        row.put("parked", null);
        return row;
    }

    private Map<String, Object> failed(DeadLetterQueue queue, String why) {
        Map<String, Object> row = start(queue);
        row.put("error", oneLine(why));
        return row;
    }

    private static Long orNull(OptionalLong figure) {
        return figure.isPresent() ? figure.getAsLong() : null;
    }

    private static String oneLine(String text) {
        return String.valueOf(text).lines().findFirst().orElse("");
    }

    /** Stops asking: a question under way is interrupted. */
    @Override
    public void close() {
        asking.shutdownNow();
    }
}
