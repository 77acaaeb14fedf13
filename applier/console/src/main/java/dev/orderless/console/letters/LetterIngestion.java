package dev.orderless.console.letters;

import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.Channel;
import dev.orderless.Backoff;
import dev.orderless.TransientException;
import dev.orderless.broker.QueueTopology;
import java.io.IOException;
import java.util.concurrent.TimeoutException;
import org.springframework.amqp.core.QueueBuilder;
import org.springframework.amqp.rabbit.connection.Connection;
import org.springframework.amqp.rabbit.core.RabbitAdmin;
import dev.orderless.amqp.DeadLetterQueue;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.amqp.core.AcknowledgeMode;
import org.springframework.amqp.core.BatchMessageListener;
import org.springframework.amqp.core.Message;
import org.springframework.amqp.rabbit.listener.SimpleMessageListenerContainer;
import org.springframework.amqp.rabbit.support.DefaultMessagePropertiesConverter;
import org.springframework.context.SmartLifecycle;

/**
 * Moves the letters of one dead-letter queue into the {@link LetterStore}, as they arrive: a Spring AMQP container
 * consuming the queue in batches, acknowledging a batch only once MongoDB stored every letter of it.
 *
 * <ol>
 *   <li>A batch (up to {@value #BATCH} letters, or what arrived within {@value #RECEIVE_MS} ms) is read as
 *       {@link DeadLetterQueue} reads letters and stored in one unordered insert; a letter stored before (a batch
 *       delivered again after a stop between store and ack) is left as it is.
 *   <li>While MongoDB refuses, the batch is held and stored again after the one back-off of orderless (up to 5 s
 *       apart), with {@link #waitingFor()} saying why; when the container stops meanwhile, the batch goes back to
 *       the queue unacknowledged.
 *   <li>A letter larger than the store keeps ({@link LetterStore#MAX_BODY_BYTES}) is first moved, with confirms, to
 *       the parking queue of its dead-letter queue ({@link QueueTopology#parkingQueue}), then stored parked without
 *       its body, saying where it is: seen and counted, never lost, never blocking the letters behind it. So is a
 *       letter whose properties MongoDB cannot hold (a header name holding a NUL, which AMQP allows and BSON not),
 *       stored with its properties as text.
 * </ol>
 * Several instances may ingest one queue at once: each letter reaches one of them, and a letter stored twice is one.
 */
public final class LetterIngestion implements SmartLifecycle {
    private static final Logger log = LoggerFactory.getLogger(LetterIngestion.class);
    static final int BATCH = 250;
    static final int RECEIVE_MS = 200;
    private static final Backoff BACKOFF = Backoff.of(Duration.ofMillis(100), Duration.ofSeconds(5));

    private final LetterStore store;
    private final DeadLetterQueue queue;
    private final SimpleMessageListenerContainer container;
    private final AtomicReference<Optional<String>> waitingFor = new AtomicReference<>(Optional.empty());
    private final AtomicLong stored = new AtomicLong();
    private final DefaultMessagePropertiesConverter converter = new DefaultMessagePropertiesConverter();

    /**
     * @param store where the letters go
     * @param queue the dead-letter queue they come from (its broker, its name, its work queue)
     */
    public LetterIngestion(LetterStore store, DeadLetterQueue queue) {
        this.store = store;
        this.queue = queue;
        this.container = new SimpleMessageListenerContainer(queue.connectionFactory());
        container.setQueueNames(queue.deadLetterQueue());
        container.setAcknowledgeMode(AcknowledgeMode.AUTO);
        container.setConsumerBatchEnabled(true);
        container.setBatchSize(BATCH);
        container.setPrefetchCount(BATCH);
        container.setReceiveTimeout(RECEIVE_MS);
        // the consumer declares its dead-letter queue when it starts: until then, try again, not fail
        container.setMissingQueuesFatal(false);
        container.setMismatchedQueuesFatal(false);
        container.setDefaultRequeueRejected(true);
        container.setRecoveryInterval(2000);
        container.setFailedDeclarationRetryInterval(1000);
        // every header as it came, long strings included: a letter is kept whole
        container.setMessagePropertiesConverter(new DefaultMessagePropertiesConverter(Integer.MAX_VALUE, true));
        container.setConsumerTagStrategy(q -> "orderless-console-letters-" + q);
        container.setMessageListener((BatchMessageListener) this::ingest);
        container.setErrorHandler(e -> log.debug("letters of '{}': a batch goes back to the queue: {}",
                queue.deadLetterQueue(), e.getMessage()));
        container.setAutoStartup(false);
        container.afterPropertiesSet();
    }

    private void ingest(List<Message> messages) {
        List<LetterStore.Incoming> incoming = null;
        for (int failures = 1; ; failures++) {
            try {
                if (incoming == null) {
                    incoming = incoming(messages);
                }
                stored.addAndGet(store.store(incoming));
                if (waitingFor.getAndSet(Optional.empty()).isPresent()) {
                    log.info("console letters: '{}' is stored to MongoDB again", queue.deadLetterQueue());
                }
                return;
            } catch (com.mongodb.MongoException | TransientException e) {
                String why = (e instanceof TransientException ? "" : "MongoDB refused storing letters of '"
                        + queue.deadLetterQueue() + "' (") + String.valueOf(e.getMessage()).lines().findFirst()
                        .orElse("") + (e instanceof TransientException ? "" : ")") + "; holding " + messages.size()
                        + " letter(s), trying again";
                if (waitingFor.getAndSet(Optional.of(why)).isEmpty()) {
                    log.warn("console letters: {}", why);
                }
                if (!container.isRunning()) {
                    throw e;   // stopping: the batch goes back to the queue
                }
                try {
                    Thread.sleep(BACKOFF.pause(Math.min(failures, 30)).toMillis());
                } catch (InterruptedException interrupted) {
                    Thread.currentThread().interrupt();
                    throw e;
                }
            }
        }
    }

    /** The batch as it will be stored; a letter too large to keep is moved to the parking queue first. */
    private List<LetterStore.Incoming> incoming(List<Message> messages) {
        List<LetterStore.Incoming> incoming = new ArrayList<>(messages.size());
        for (Message message : messages) {
            byte[] body = message.getBody();
            AMQP.BasicProperties props = converter.fromMessageProperties(message.getMessageProperties(), "UTF-8");
            // a letter MongoDB cannot take as it is is set aside in the broker, never handed back: handed back, it
            // would come first again, and every letter behind it would wait for ever
            if (body.length > LetterStore.MAX_BODY_BYTES) {
                String parking = QueueTopology.parkingQueue(queue.deadLetterQueue());
                park(parking, props, body);
                log.warn("console letters: a letter of {} bytes in '{}' is larger than the console keeps ({}): moved"
                        + " to '{}', stored parked without its body", body.length, queue.deadLetterQueue(),
                        LetterStore.MAX_BODY_BYTES, parking);
                incoming.add(store.heldElsewhere(queue.workQueue(), queue.deadLetterQueue(), props, body, parking));
            } else if (LetterStore.unstorable(props).isPresent()) {
                String parking = QueueTopology.parkingQueue(queue.deadLetterQueue());
                String why = LetterStore.unstorable(props).get();
                park(parking, props, body);
                log.warn("console letters: a letter in '{}' has properties MongoDB cannot hold ({}): moved to '{}',"
                        + " stored parked with its properties as text", queue.deadLetterQueue(), why, parking);
                incoming.add(store.unstorableHeldElsewhere(queue.workQueue(), queue.deadLetterQueue(), props, body,
                        parking, why));
            } else {
                incoming.add(store.incoming(queue.workQueue(), queue.deadLetterQueue(), props, body));
            }
        }
        return incoming;
    }

    /** Moves a letter to {@code parking} (declared if missing) and waits for the broker to confirm it. */
    private void park(String parking, AMQP.BasicProperties props, byte[] body) {
        if (QueueTopology.lookup(queue.connectionFactory(), parking).isEmpty()) {
            new RabbitAdmin(queue.connectionFactory()).declareQueue(QueueBuilder.durable(parking).build());
        }
        try (Connection connection = queue.connectionFactory().createConnection();
             Channel channel = connection.getDelegate().createChannel()) {
            channel.confirmSelect();
            channel.basicPublish("", parking, true, props, body);
            channel.waitForConfirmsOrDie(10_000);
        } catch (IOException | TimeoutException e) {
            throw new TransientException("moving a large letter to '" + parking + "': " + e, e, false);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new TransientException("moving a large letter to '" + parking + "': interrupted", e, false);
        }
    }

    /** @return the dead-letter queue it empties */
    public DeadLetterQueue queue() {
        return queue;
    }

    /** @return what it waits for while it holds letters (MongoDB), if anything */
    public Optional<String> waitingFor() {
        return waitingFor.get();
    }

    /** @return letters it stored since it started (not counting ones stored before) */
    public long stored() {
        return stored.get();
    }

    /** @return true while its container consumes the queue */
    public boolean isConsuming() {
        return container.isRunning() && container.getActiveConsumerCount() > 0;
    }

    @Override
    public void start() {
        container.start();
    }

    @Override
    public void stop() {
        container.stop();
    }

    @Override
    public boolean isRunning() {
        return container.isRunning();
    }

    /** With the consumers, which declare the dead-letter queues. */
    @Override
    public int getPhase() {
        return Integer.MAX_VALUE;
    }
}
