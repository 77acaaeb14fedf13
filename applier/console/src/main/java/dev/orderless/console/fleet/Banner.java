package dev.orderless.console.fleet;

import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import org.bson.Document;

/**
 * What is wrong now, worst first, from the fleet's reports and the letters' figures: a pure function of its inputs (no
 * MongoDB, no broker, no clock of its own), so each rule is tested alone. Each problem names the thing (queue, view,
 * instance) and what to check, in one line, with the page's route that shows it.
 *
 * <p>The rules, errors first, then by the order here:
 * <ol>
 *   <li>error: a consumer stopped, or running but waiting for something (its own signal: MongoDB, the broker), on an
 *       instance that is up;
 *   <li>error: a view feeder failed;
 *   <li>error: the ingestion of a dead-letter queue waits;
 *   <li>error: an instance gone (silent for three intervals without a goodbye); a stopped instance is no problem;
 *   <li>warning: dead letters arriving in the last five minutes, per queue;
 *   <li>warning: a view feeder lagging over {@value #LAG_SECONDS} s;
 *   <li>warning: outbox entries parked;
 *   <li>warning: a pass whose last run failed.
 * </ol>
 */
final class Banner {
    /** A feeder further behind than this is lagging. */
    static final long LAG_SECONDS = 60;
    /** The window of letter arrivals the banner reports. */
    static final Duration ARRIVALS = Duration.ofMinutes(5);
    private static final int MAX_DETAIL = 200;
    private static final String FLEET = "#/fleet";

    private Banner() {
    }

    /** How bad. */
    enum Severity {
        ERROR, WARNING;

        String label() {
            return name().toLowerCase(Locale.ROOT);
        }
    }

    /**
     * One thing wrong.
     *
     * @param severity how bad
     * @param what     one line naming the thing and what to check
     * @param link     the page's route showing it ({@code #/fleet}, {@code #/dead-letters?queue=...}, {@code #/overview})
     * @param rank     its rule's place in the order (worst first, within its severity)
     */
    record Problem(Severity severity, String what, String link, int rank) {
        Problem {
            if (severity == null || what == null || link == null || !link.startsWith("#/")) {
                throw new IllegalArgumentException("a problem needs a severity, a line and a route, was " + severity
                        + ", " + what + ", " + link);
            }
            what = oneLine(what);
        }

        Map<String, Object> describe() {
            Map<String, Object> problem = new LinkedHashMap<>();
            problem.put("severity", severity.label());
            problem.put("what", what);
            problem.put("link", link);
            return problem;
        }
    }

    /**
     * The problems, worst first.
     *
     * @param reports      every instance's report (as stored, or this instance's own, fresher)
     * @param now          the reader's time, by which silence is judged
     * @param arrivals     letters dead-lettered in the last {@link #ARRIVALS} per work queue
     * @param outboxParked outbox entries parked
     * @param ingestion    per work queue, what moving its letters into the store waits for
     * @return the problems, errors first; empty when all is well
     */
    static List<Problem> problems(List<Document> reports, Instant now, Map<String, Long> arrivals, long outboxParked,
                                  Map<String, String> ingestion) {
        List<Problem> problems = new ArrayList<>();
        for (Document report : reports) {
            String instance = String.valueOf(report.get(FleetReports.ID));
            switch (FleetReports.state(report, now)) {
                case STOPPED -> {
                    // said goodbye: what ran in it stopped on purpose
                }
                case GONE -> problems.add(new Problem(Severity.ERROR, "instance " + instance + " on "
                        + report.get(FleetReports.HOST) + " has not reported for "
                        + FleetReports.silent(report, now).toSeconds() + " s (" + FleetReports.SILENT_INTERVALS
                        + " intervals) and did not say it stopped: check whether its process was killed or cannot reach"
                        + " MongoDB", FLEET, 3));
                case UP -> problems.addAll(ofInstance(instance, report));
            }
        }
        new TreeMap<>(ingestion).forEach((queue, why) -> problems.add(new Problem(Severity.ERROR, "dead letters of"
                + " queue '" + queue + "' are not being moved into the console's store: " + detail(why), letters(queue),
                2)));
        new TreeMap<>(arrivals).forEach((queue, count) -> {
            if (count != null && count > 0) {
                problems.add(new Problem(Severity.WARNING, count + " dead letter" + (count == 1 ? "" : "s")
                        + " arrived on queue '" + queue + "' in the last " + ARRIVALS.toMinutes() + " minutes: check"
                        + " why they failed", letters(queue), 4));
            }
        });
        if (outboxParked > 0) {
            problems.add(new Problem(Severity.WARNING, outboxParked + " outbox entr" + (outboxParked == 1 ? "y is"
                    : "ies are") + " parked: the relay could not publish them; check the outbox's problem",
                    "#/overview", 6));
        }
        problems.sort(Comparator.comparing(Problem::severity).thenComparingInt(Problem::rank)
                .thenComparing(Problem::what));
        return problems;
    }

    /** What is wrong in an instance that is up: its consumers, feeders and passes. */
    private static List<Problem> ofInstance(String instance, Document report) {
        List<Problem> problems = new ArrayList<>();
        for (Map<?, ?> consumer : maps(report.get(FleetReports.CONSUMERS))) {
            Object queue = consumer.get("queue");
            Object waitingFor = consumer.get("waitingFor");
            if ("STOPPED".equals(consumer.get("state"))) {
                problems.add(new Problem(Severity.ERROR, "consumer of queue '" + queue + "' is stopped on instance "
                        + instance + (waitingFor == null ? ": its listener threads do not run; check that instance's log"
                        : ", waiting for " + detail(waitingFor) + "; check it"), FLEET, 0));
            } else if (waitingFor != null) {
                problems.add(new Problem(Severity.ERROR, "consumer of queue '" + queue + "' on instance " + instance
                        + " is stuck, its messages held: it waits for " + detail(waitingFor) + "; check it", FLEET,
                        0));
            }
        }
        for (Map<?, ?> feeder : maps(report.get(FleetReports.FEEDERS))) {
            Object view = feeder.get("view");
            if ("FAILED".equals(feeder.get("state"))) {
                problems.add(new Problem(Severity.ERROR, "the feeder of view '" + view + "' failed on instance "
                        + instance + (feeder.get("failure") == null ? "" : ": " + detail(feeder.get("failure")))
                        + "; it is not restarted: fix the cause and restart the instance", FLEET, 1));
            } else if (feeder.get("lagSeconds") instanceof Number lag && lag.doubleValue() > LAG_SECONDS) {
                problems.add(new Problem(Severity.WARNING, "view '" + view + "' lags " + Math.round(lag.doubleValue())
                        + " s behind its source on instance " + instance + ": check its feeder's log and MongoDB's"
                        + " load", FLEET, 5));
            }
        }
        for (Map<?, ?> pass : maps(report.get(FleetReports.PASSES))) {
            if (pass.get("lastFailure") != null) {
                problems.add(new Problem(Severity.WARNING, "the last " + pass.get("name") + " pass on instance "
                        + instance + " failed: " + detail(pass.get("lastFailure")) + "; it is tried again at the next"
                        + " interval", FLEET, 7));
            }
        }
        return problems;
    }

    /** The banner's JSON: {@code {problems: [{severity, what, link}]}}. */
    static Map<String, Object> describe(List<Problem> problems) {
        return Map.of("problems", problems.stream().map(Problem::describe).toList());
    }

    private static List<Map<?, ?>> maps(Object list) {
        List<Map<?, ?>> maps = new ArrayList<>();
        if (list instanceof List<?> items) {
            for (Object item : items) {
                if (item instanceof Map<?, ?> map) {
                    maps.add(map);
                }
            }
        }
        return maps;
    }

    private static String letters(String queue) {
        return "#/dead-letters?queue=" + URLEncoder.encode(queue, StandardCharsets.UTF_8).replace("+", "%20");
    }

    /** A failure's text, cut to one line of at most {@value #MAX_DETAIL} characters. */
    private static String detail(Object text) {
        String line = oneLine(String.valueOf(text));
        return line.length() <= MAX_DETAIL ? line : line.substring(0, MAX_DETAIL) + "...";
    }

    private static String oneLine(String text) {
        return text.replaceAll("[\\r\\n\\u2028\\u2029]+", " ").strip();
    }
}
