package dev.orderless.chaos;

import static dev.orderless.testing.rabbit.LocalRabbitMq.ctl;

import dev.orderless.backends.rabbit.RabbitBackend;
import java.io.IOException;
import java.time.Duration;
import java.util.Optional;
import org.awaitility.Awaitility;

/**
 * A RabbitMQ disk alarm raised on purpose: {@code rabbitmqctl set_disk_free_limit 10000GB} makes the broker
 * block every publishing connection, as a full disk would. {@link #close()} puts the limit back, and so
 * does a JVM shutdown hook if the test run dies first: a broker left in alarm would block every later
 * run on this machine.
 */
final class DiskAlarm implements AutoCloseable {
    private static final Duration COMMAND_TIMEOUT = Duration.ofSeconds(60);
    private final RabbitBackend rabbit;
    private final String originalLimit;
    private final Thread restoreOnExit;
    private boolean closed;

    private DiskAlarm(RabbitBackend rabbit, String originalLimit) {
        this.rabbit = rabbit;
        this.originalLimit = originalLimit;
        this.restoreOnExit = new Thread(this::restore, "restore-rabbitmq-disk-limit");
    }

    /**
     * Why an alarm cannot be raised here, or empty if it can: it needs a real RabbitMQ on this machine and
     * its {@code rabbitmqctl} (the embedded Qpid broker has no resource alarms).
     */
    static Optional<String> unavailable(RabbitBackend rabbit) {
        return dev.orderless.testing.rabbit.LocalRabbitMq.unusable(rabbit);   // never the alarm of a broker not under test
    }

    /** Raises the alarm on {@code rabbit} and waits (bounded) until the broker reports it. */
    static DiskAlarm raise(RabbitBackend rabbit) throws IOException {
        String limit = ctl(rabbit, "eval", "rabbit_disk_monitor:get_disk_free_limit().").strip();
        if (!limit.matches("\\d+")) {
            throw new IOException("unexpected disk free limit from rabbitmqctl: " + limit);
        }
        DiskAlarm alarm = new DiskAlarm(rabbit, limit);
        Runtime.getRuntime().addShutdownHook(alarm.restoreOnExit);
        ctl(rabbit, "set_disk_free_limit", "10000GB");
        Awaitility.await("disk alarm raised").atMost(COMMAND_TIMEOUT).pollInterval(Duration.ofMillis(500))
                .until(alarm::active);
        return alarm;
    }

    boolean active() throws IOException {
        return ctl(rabbit, "eval", "rabbit_alarm:get_alarms().").contains("disk");
    }

    /** Puts the original limit back and waits (bounded) until the alarm clears. */
    @Override
    public void close() throws IOException {
        if (closed) {
            return;
        }
        closed = true;
        restore();
        try {
            Runtime.getRuntime().removeShutdownHook(restoreOnExit);
        } catch (IllegalStateException e) {
            // the JVM is shutting down: the hook runs anyway
        }
        Awaitility.await("disk alarm cleared").atMost(COMMAND_TIMEOUT).pollInterval(Duration.ofMillis(500))
                .until(() -> !active());
    }

    private void restore() {
        try {
            ctl(rabbit, "set_disk_free_limit", originalLimit);
        } catch (IOException | RuntimeException e) {
            System.err.println("[alarm] could not restore RabbitMQ's disk free limit to " + originalLimit
                    + ": run `rabbitmqctl set_disk_free_limit " + originalLimit + "` (" + e.getMessage() + ")");
        }
    }

}
