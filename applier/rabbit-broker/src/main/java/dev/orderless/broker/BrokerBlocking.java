package dev.orderless.broker;

import com.rabbitmq.client.BlockedListener;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.amqp.rabbit.connection.Connection;
import org.springframework.amqp.rabbit.connection.ConnectionFactory;
import org.springframework.amqp.rabbit.connection.ConnectionListener;

/**
 * Whether RabbitMQ is blocking the publishing connections of one connection factory, as the broker says
 * ({@code connection.blocked} / {@code connection.unblocked}, sent during a memory or disk alarm).
 * A blocked connection accepts writes into its socket and never reads them, so a publisher that does
 * not watch for it waits without limit; every publish orderless makes asks here first.
 *
 * <p>Watches every connection the factory creates, now and after a reconnect: the client's connection
 * ({@link Connection#getDelegate()}), not the factory's handle to it, which a caching factory keeps across
 * reconnects and gives a new connection behind. Counted in Micrometer:
 * {@code orderless.amqp.blocked.seconds{role}} (time spent blocked, the current episode included) and
 * {@code orderless.amqp.blocked.now{role}} (1 while blocked). Logged at WARN when it starts, INFO when
 * it ends.
 */
public final class BrokerBlocking implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(BrokerBlocking.class);

    private final String role;
    private ConnectionFactory factory;
    private ConnectionListener connectionListener;
    private BlockedListener blockedListener;
    /** The client's connections listened to (open ones, and closed ones until the next create or close). */
    private final java.util.Set<com.rabbitmq.client.Connection> watched = java.util.concurrent.ConcurrentHashMap.newKeySet();
    private final Object lock = new Object();
    private final List<Runnable> onUnblocked = new CopyOnWriteArrayList<>();
    private String reason;              // guarded by lock; null while not blocked
    private long blockedSinceNanos;     // guarded by lock
    private long blockedNanos;          // guarded by lock: finished episodes

    private BrokerBlocking(String role) {
        this.role = role;
    }

    /**
     * Starts watching the connections of {@code factory}. {@code role} names them in logs and metrics
     * ("dead-letters", "publisher").
     */
    public static BrokerBlocking watch(ConnectionFactory factory, MeterRegistry meters, String role) {
        BrokerBlocking blocking = new BrokerBlocking(role);
        BlockedListener listener = new BlockedListener() {
            @Override
            public void handleBlocked(String why) {
                blocking.blocked(why);
            }

            @Override
            public void handleUnblocked() {
                blocking.unblocked();
            }
        };
        blocking.factory = factory;
        blocking.blockedListener = listener;
        blocking.connectionListener = new ConnectionListener() {
            @Override
            public void onCreate(Connection connection) {
                blocking.unblocked();   // a new connection starts unblocked; the broker says again if not
                blocking.listenTo(connection);
            }

            @Override
            public void onShutDown(com.rabbitmq.client.ShutdownSignalException signal) {
                blocking.unblocked();   // the blocked connection is gone (a broker restart, say)
            }

            @Override
            public void onClose(Connection connection) {
                blocking.unblocked();   // a new connection starts unblocked; the broker says again if not
                blocking.watched.removeIf(c -> !c.isOpen());
            }
        };
        factory.addConnectionListener(blocking.connectionListener);
        FunctionCounter.builder("orderless.amqp.blocked.seconds", blocking, BrokerBlocking::blockedSeconds)
                .description("time the broker blocked these publishing connections (resource alarm)")
                .baseUnit("seconds").tag("role", role).register(meters);
        // a registry keeps the first object a gauge was registered with: the latest watcher reports
        meters.find("orderless.amqp.blocked.now").tag("role", role).gauges().forEach(meters::remove);
        Gauge.builder("orderless.amqp.blocked.now", blocking, b -> b.reason().isPresent() ? 1 : 0)
                .description("1 while the broker blocks these publishing connections").tag("role", role)
                .register(meters);
        return blocking;
    }

    /** The broker's reason ("low on disk", "low on memory") while it blocks publishing; empty otherwise. */
    public Optional<String> reason() {
        synchronized (lock) {
            return Optional.ofNullable(reason);
        }
    }

    /**
     * Waits until the broker stops blocking, at most {@code atMost}.
     *
     * @return true if not blocked (now or within the wait)
     */
    public boolean awaitUnblocked(Duration atMost) throws InterruptedException {
        long deadline = System.nanoTime() + atMost.toNanos();
        synchronized (lock) {
            while (reason != null) {
                long left = deadline - System.nanoTime();
                if (left <= 0) {
                    return false;
                }
                TimeUnit.NANOSECONDS.timedWait(lock, left);
            }
            return true;
        }
    }

    /** Stops watching (the factory and its connections forget this watcher). */
    @Override
    public void close() {
        factory.removeConnectionListener(connectionListener);
        for (com.rabbitmq.client.Connection c : watched) {
            c.removeBlockedListener(blockedListener);
        }
        watched.clear();
        onUnblocked.clear();
    }

    /**
     * Listens to the client's connection behind {@code connection}, once. A caching factory tells its listeners
     * {@code onCreate} with the same handle each time it connects again after a connection was lost (and
     * {@code onClose} only when it closes one itself): keyed by that handle, a watcher would stay on the lost
     * connection and never hear the broker on the new one.
     */
    private void listenTo(Connection connection) {
        com.rabbitmq.client.Connection client;
        try {
            client = connection.getDelegate();
        } catch (RuntimeException e) {
            log.debug("no connection behind the factory's handle yet: {}", e.toString());
            return;
        }
        watched.removeIf(c -> !c.isOpen());
        if (watched.add(client)) {
            client.addBlockedListener(blockedListener);
        }
    }

    /**
     * Runs {@code action} (on the connection's thread: keep it short) each time blocking ends, until {@link
     * #removeOnUnblocked removed}: a publisher holding what it would send sends it then.
     */
    public void onUnblocked(Runnable action) {
        onUnblocked.add(action);
    }

    /** No longer runs {@code action} when blocking ends (it did nothing if it was not added). */
    public void removeOnUnblocked(Runnable action) {
        onUnblocked.remove(action);
    }

    double blockedSeconds() {
        synchronized (lock) {
            long current = reason == null ? 0 : System.nanoTime() - blockedSinceNanos;
            return (blockedNanos + current) / 1e9;
        }
    }

    void blocked(String why) {
        synchronized (lock) {
            if (reason != null) {
                return;
            }
            reason = why == null || why.isBlank() ? "no reason given" : why;
            blockedSinceNanos = System.nanoTime();
        }
        log.warn("RabbitMQ is blocking the {} connection: {}; publishes wait (bounded) or are held until it"
                + " clears", role, why);
    }

    void unblocked() {
        long episode;
        synchronized (lock) {
            if (reason == null) {
                return;
            }
            episode = System.nanoTime() - blockedSinceNanos;
            blockedNanos += episode;
            reason = null;
            lock.notifyAll();
        }
        log.info("RabbitMQ no longer blocks the {} connection (blocked {} ms)", role, Duration.ofNanos(episode).toMillis());
        onUnblocked.forEach(Runnable::run);
    }
}
