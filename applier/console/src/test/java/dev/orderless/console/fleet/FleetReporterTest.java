package dev.orderless.console.fleet;

import static org.assertj.core.api.Assertions.assertThat;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import java.net.ServerSocket;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicInteger;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;

/** The reporter's thread against a MongoDB that never answers: it keeps trying, and says so once. */
class FleetReporterTest {

    @Test
    void reports_failing_in_a_row_are_said_in_one_warn_line_naming_the_collection_and_tried_again() throws Exception {
        int closedPort;
        try (ServerSocket socket = new ServerSocket(0)) {   // a port nothing listens on once closed
            closedPort = socket.getLocalPort();
        }
        ListAppender<ILoggingEvent> lines = new ListAppender<>();
        Logger logger = (Logger) LoggerFactory.getLogger(FleetReporter.class);
        lines.start();
        logger.addAppender(lines);
        CountingClock clock = new CountingClock();
        try (MongoClient client = MongoClients.create("mongodb://127.0.0.1:" + closedPort
                + "/?serverSelectionTimeoutMS=200&connectTimeoutMS=200")) {
            FleetReporter reporter = new FleetReporter(client.getDatabase("nowhere").getCollection("fleet_reports"),
                    Instance.ofThisProcess(Optional.empty(), Instant.now()), new InstanceSnapshot(List.of(), Map.of(),
                    Optional.empty(), List.of(), Optional.empty(), Optional.empty()), Duration.ofSeconds(1), clock);
            reporter.start();
            try {
                Awaitility.await("three reports tried").atMost(Duration.ofSeconds(30))
                        .until(() -> clock.reports.get() >= 3);
            } finally {
                reporter.halt();   // no goodbye: it would fail (and say so) too
                logger.detachAppender(lines);
            }
        }

        assertThat(lines.list).filteredOn(line -> line.getLevel() == Level.WARN).singleElement()
                .extracting(ILoggingEvent::getFormattedMessage).asString().contains("'fleet_reports'", "check");
    }

    /** The system clock, counting the reports it stamps (one instant per report). */
    private static final class CountingClock extends Clock {
        final AtomicInteger reports = new AtomicInteger();

        @Override
        public ZoneId getZone() {
            return ZoneOffset.UTC;
        }

        @Override
        public Clock withZone(ZoneId zone) {
            return this;
        }

        @Override
        public Instant instant() {
            reports.incrementAndGet();
            return Instant.now();
        }
    }

}
