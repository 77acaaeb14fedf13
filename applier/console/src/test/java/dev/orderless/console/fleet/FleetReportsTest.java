package dev.orderless.console.fleet;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Instant;
import java.util.Date;
import org.bson.Document;
import org.junit.jupiter.api.Test;

/** How a reader judges an instance from its report, by the reader's clock. */
class FleetReportsTest {
    private static final Instant NOW = Instant.parse("2026-11-29T10:00:00Z");

    @Test
    void an_instance_silent_for_exactly_three_intervals_is_still_up() {
        assertThat(FleetReports.state(report(NOW.minusSeconds(15)), NOW)).isEqualTo(FleetReports.State.UP);
    }

    @Test
    void an_instance_silent_for_longer_than_three_intervals_is_gone() {
        assertThat(FleetReports.state(report(NOW.minusMillis(15_001)), NOW)).isEqualTo(FleetReports.State.GONE);
    }

    @Test
    void an_instance_that_said_goodbye_is_stopped_however_recent_its_report() {
        assertThat(FleetReports.state(report(NOW).append("stoppedAt", Date.from(NOW)), NOW))
                .isEqualTo(FleetReports.State.STOPPED);
    }

    @Test
    void a_report_stamped_ahead_of_the_readers_clock_is_silent_for_no_time() {
        assertThat(FleetReports.silent(report(NOW.plusSeconds(30)), NOW)).isZero();
    }

    private static Document report(Instant reportedAt) {
        return new Document("_id", "a").append("reportedAt", Date.from(reportedAt)).append("interval", "PT5S");
    }
}
