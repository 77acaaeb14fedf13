package dev.orderless.console.fleet;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.time.Instant;
import java.util.Date;
import java.util.List;
import java.util.Map;
import org.bson.Document;
import org.junit.jupiter.api.Test;

/** The banner's rules, each alone, on reports built here: no MongoDB, no broker, no clock. */
class BannerTest {
    private static final Instant NOW = Instant.parse("2026-11-29T10:00:00Z");

    @Test
    void a_fleet_where_all_runs_has_no_problem() {
        assertThat(problems(up("a").append("consumers", List.of(consumer("students", "RUNNING", null))))).isEmpty();
    }

    @Test
    void a_stopped_consumer_is_an_error_naming_its_queue_and_its_instance() {
        List<Banner.Problem> problems = problems(up("host:1:aa").append("consumers",
                List.of(consumer("students", "STOPPED", null))));

        assertThat(problems).singleElement().satisfies(p -> {
            assertThat(p.severity()).isEqualTo(Banner.Severity.ERROR);
            assertThat(p.what()).contains("queue 'students'", "stopped", "instance host:1:aa");
            assertThat(p.link()).isEqualTo("#/fleet");
        });
    }

    @Test
    void a_running_consumer_waiting_for_mongodb_is_an_error_saying_what_it_waits_for() {
        List<Banner.Problem> problems = problems(up("a").append("consumers",
                List.of(consumer("students", "RUNNING", "MongoDB: NotWritablePrimary"))));

        assertThat(problems).singleElement().satisfies(p -> {
            assertThat(p.severity()).isEqualTo(Banner.Severity.ERROR);
            assertThat(p.what()).contains("queue 'students'", "stuck", "MongoDB: NotWritablePrimary");
        });
    }

    @Test
    void a_failed_feeder_is_an_error_naming_its_view_and_why() {
        List<Banner.Problem> problems = problems(up("a").append("feeders", List.of(new Document("view", "rosters")
                .append("state", "FAILED").append("failure", "the projection threw"))));

        assertThat(problems).singleElement().satisfies(p -> {
            assertThat(p.severity()).isEqualTo(Banner.Severity.ERROR);
            assertThat(p.what()).contains("view 'rosters'", "failed", "the projection threw");
        });
    }

    @Test
    void a_feeder_lagging_over_a_minute_is_a_warning_and_under_a_minute_is_none() {
        List<Banner.Problem> problems = problems(up("a").append("feeders", List.of(
                new Document("view", "slow").append("state", "ACTIVE").append("lagSeconds", 61.5),
                new Document("view", "fine").append("state", "ACTIVE").append("lagSeconds", 59.0))));

        assertThat(problems).singleElement().satisfies(p -> {
            assertThat(p.severity()).isEqualTo(Banner.Severity.WARNING);
            assertThat(p.what()).contains("view 'slow'", "62 s");
        });
    }

    @Test
    void an_instance_silent_for_three_intervals_is_an_error_linking_the_fleet() {
        Document gone = report("host:7:bb", NOW.minusSeconds(16)).append("consumers",
                List.of(consumer("students", "STOPPED", null)));   // stale: not judged

        assertThat(problems(gone)).singleElement().satisfies(p -> {
            assertThat(p.severity()).isEqualTo(Banner.Severity.ERROR);
            assertThat(p.what()).contains("instance host:7:bb", "not reported for 16 s");
            assertThat(p.link()).isEqualTo("#/fleet");
        });
    }

    @Test
    void an_instance_that_said_goodbye_is_no_problem_though_its_consumers_stopped() {
        Document stopped = report("a", NOW.minusSeconds(3600)).append("stoppedAt", Date.from(NOW.minusSeconds(3600)))
                .append("consumers", List.of(consumer("students", "STOPPED", null)));

        assertThat(problems(stopped)).isEmpty();
    }

    @Test
    void dead_letters_arriving_are_a_warning_per_queue_linking_its_letters() {
        List<Banner.Problem> problems = Banner.problems(List.of(), NOW, Map.of("odd queue", 4L, "quiet", 0L), 0,
                Map.of());

        assertThat(problems).singleElement().satisfies(p -> {
            assertThat(p.severity()).isEqualTo(Banner.Severity.WARNING);
            assertThat(p.what()).contains("4 dead letters", "queue 'odd queue'", "last 5 minutes");
            assertThat(p.link()).isEqualTo("#/dead-letters?queue=odd%20queue");
        });
    }

    @Test
    void parked_outbox_entries_are_a_warning_linking_the_overview() {
        List<Banner.Problem> problems = Banner.problems(List.of(), NOW, Map.of(), 3, Map.of());

        assertThat(problems).singleElement().satisfies(p -> {
            assertThat(p.severity()).isEqualTo(Banner.Severity.WARNING);
            assertThat(p.what()).contains("3 outbox entries are parked");
            assertThat(p.link()).isEqualTo("#/overview");
        });
    }

    @Test
    void a_pass_whose_last_run_failed_is_a_warning_naming_it() {
        List<Banner.Problem> problems = problems(up("a").append("passes", List.of(new Document("name", "compaction")
                .append("state", "RUNNING").append("lastFailure", "MongoTimeoutException: no primary"))));

        assertThat(problems).singleElement().satisfies(p -> {
            assertThat(p.severity()).isEqualTo(Banner.Severity.WARNING);
            assertThat(p.what()).contains("compaction", "MongoTimeoutException: no primary");
        });
    }

    @Test
    void letter_ingestion_waiting_is_an_error_naming_the_queue() {
        List<Banner.Problem> problems = Banner.problems(List.of(), NOW, Map.of(), 0,
                Map.of("students", "the broker does not answer"));

        assertThat(problems).singleElement().satisfies(p -> {
            assertThat(p.severity()).isEqualTo(Banner.Severity.ERROR);
            assertThat(p.what()).contains("queue 'students'", "the broker does not answer");
            assertThat(p.link()).isEqualTo("#/dead-letters?queue=students");
        });
    }

    @Test
    void errors_come_before_warnings_and_stuck_consumers_first() {
        List<Banner.Problem> problems = Banner.problems(List.of(
                report("gone", NOW.minusSeconds(60)),
                up("up").append("consumers", List.of(consumer("students", "STOPPED", null)))
                        .append("passes", List.of(new Document("name", "compaction").append("lastFailure", "x")))),
                NOW, Map.of("students", 2L), 1, Map.of());

        assertThat(problems).extracting(Banner.Problem::what).satisfiesExactly(
                what -> assertThat(what).contains("consumer of queue 'students'"),
                what -> assertThat(what).contains("instance gone"),
                what -> assertThat(what).contains("2 dead letters"),
                what -> assertThat(what).contains("outbox"),
                what -> assertThat(what).contains("compaction"));
    }

    @Test
    void a_reason_spanning_lines_is_shown_in_one_line() {
        List<Banner.Problem> problems = problems(up("a").append("consumers",
                List.of(consumer("students", "RUNNING", "MongoDB: first\nsecond\r\nthird"))));

        assertThat(problems).singleElement().extracting(Banner.Problem::what).asString()
                .doesNotContain("\n", "\r").contains("first second third");
    }

    private static List<Banner.Problem> problems(Document report) {
        return Banner.problems(List.of(report), NOW, Map.of(), 0, Map.of());
    }

    private static Document up(String id) {
        return report(id, NOW.minusSeconds(2));
    }

    private static Document report(String id, Instant reportedAt) {
        return new Document("_id", id).append("host", "host").append("pid", 1L).append("reportedAt",
                Date.from(reportedAt)).append("interval", Duration.ofSeconds(5).toString());
    }

    private static Document consumer(String queue, String state, String waitingFor) {
        return new Document("queue", queue).append("state", state).append("retrying", 0).append("waitingFor",
                waitingFor);
    }
}
