package dev.orderless.console.fleet;

import dev.orderless.InvalidConfigurationException;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.bson.Document;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The console's view of the whole fleet, answering its JSON ({@code api/overview}'s {@code instance} and
 * {@code queues}, {@code api/fleet}, {@code api/banner}): every instance's report of the last day, judged by this
 * instance's clock, and this instance's own figures read live (fresher than its last report, and shown even when its
 * reports cannot be written).
 *
 * <p>What it guarantees: an instance is {@code UP} while it reports, {@code STOPPED} once it said goodbye, and
 * {@code GONE} once silent for three of its own intervals; the banner answers even when the reports cannot be read
 * (it says so, as its first problem, and judges this instance alone, within a few seconds) or the stored letters
 * cannot be counted (it says so too), and says when this instance's own reports cannot be written (the others show
 * it gone).
 */
public final class Fleet {
    private static final Logger log = LoggerFactory.getLogger(Fleet.class);
    /** How long reading the reports may take: a MongoDB that does not answer makes the banner late by this much. */
    private static final java.time.Duration READ_TIMEOUT = java.time.Duration.ofSeconds(Backlog.ANSWER_SECONDS);

    private final FleetReporter reporter;
    private final Backlog backlog;
    private final LetterFigures letters;

    /**
     * @param reporter this instance's reporter: its identity, what runs in it, and the fleet's collection
     * @param backlog  the work queues' backlog
     * @param letters  the stored letters' figures ({@link LetterFigures#none()} until the letter store exists)
     * @throws InvalidConfigurationException if a part is missing
     */
    public Fleet(FleetReporter reporter, Backlog backlog, LetterFigures letters) {
        if (reporter == null || backlog == null || letters == null) {
            throw InvalidConfigurationException.refused("console fleet", "every part", "must be given");
        }
        this.reporter = reporter;
        this.backlog = backlog;
        this.letters = letters;
    }

    /** @return what runs in this instance: the overview's consumers, feeders, outbox and passes */
    public InstanceSnapshot snapshot() {
        return reporter.snapshot();
    }

    /** @return this instance: {@code {id, host, pid, application?, started}} */
    public Map<String, Object> instance() {
        return reporter.instance().describe();
    }

    /** @return each work queue's backlog, as {@link Backlog#queues} */
    public List<Map<String, Object>> queues() {
        return backlog.queues(letters);
    }

    /**
     * {@code {time, interval, instances: [...]}}: every instance that reported in the last day, this one first, then
     * by id.
     *
     * @return the fleet
     * @throws com.mongodb.MongoException if the reports cannot be read
     */
    public Map<String, Object> fleet() {
        Instant now = reporter.clock().instant();
        Map<String, Object> fleet = new LinkedHashMap<>();
        fleet.put("time", now.toEpochMilli());
        fleet.put("interval", reporter.interval().toString());
        fleet.put("instances", reports(now).stream().map(report -> FleetReports.describe(report, now)).toList());
        return fleet;
    }

    /**
     * {@code {problems: [{severity, what, link}]}}, worst first; empty when all is well.
     *
     * @return the banner
     */
    public Map<String, Object> banner() {
        Instant now = reporter.clock().instant();
        List<Document> reports;
        List<Banner.Problem> unread = new ArrayList<>();
        boolean read = true;
        try {
            reports = reports(now);
        } catch (RuntimeException e) {   // the banner still judges this instance, and says what it cannot see
            String why = "the fleet's reports in '" + reporter.reports().name() + "' could not be read ("
                    + FleetReporter.oneLine(e) + "): only this instance is judged; check that MongoDB answers";
            log.warn("console: {}", why);
            reports = List.of(reporter.report(now));
            read = false;
            unread.add(new Banner.Problem(Banner.Severity.ERROR, why, "#/fleet", -1));
        }
        reporter.failure().ifPresent(why -> unread.add(new Banner.Problem(Banner.Severity.ERROR, "instance "
                + reporter.instance().id() + " (this one) cannot write its report to the fleet in '"
                + reporter.reports().name() + "' (" + why + "): every other instance shows it gone; check that"
                + " MongoDB answers and accepts writes there", "#/fleet", -1)));
        Map<String, Long> arrivals = Map.of();
        Map<String, String> ingestion = letters.ingestionWaiting();
        if (read) {
            try {   // a part that cannot be read is a problem of its own, never the banner unshown
                arrivals = letters.arrivedSince(now.minus(Banner.ARRIVALS));
            } catch (RuntimeException e) {
                String why = "the stored dead letters could not be counted (" + FleetReporter.oneLine(e)
                        + "): letters arriving are not judged; check that MongoDB answers";
                log.warn("console: {}", why);
                unread.add(new Banner.Problem(Banner.Severity.ERROR, why, "#/dead-letters", -1));
            }
        }   // else MongoDB did not answer the reports: asking it again would only make the banner as late again
        long parked = reports.stream().filter(r -> FleetReports.state(r, now) == FleetReports.State.UP)
                .map(r -> r.get(FleetReports.OUTBOX)).filter(Map.class::isInstance)
                .map(o -> ((Map<?, ?>) o).get("parked")).filter(Number.class::isInstance)
                .mapToLong(n -> ((Number) n).longValue()).max().orElse(0);   // one outbox, seen by each relay
        List<Banner.Problem> problems = new ArrayList<>(unread);
        problems.addAll(Banner.problems(reports, now, arrivals, parked, ingestion));
        return Banner.describe(problems);
    }

    /** The reports of the last day, this instance's own replaced by its live one, this instance first, then by id. */
    private List<Document> reports(Instant now) {
        String self = reporter.instance().id();
        List<Document> reports = new ArrayList<>();
        reports.add(reporter.report(now));
        for (Document report : reporter.reports().since(now.minus(FleetReports.KEPT), READ_TIMEOUT)) {
            if (!self.equals(report.get(FleetReports.ID))) {
                reports.add(report);
            }
        }
        reports.subList(1, reports.size()).sort(Comparator.comparing(r -> String.valueOf(r.get(FleetReports.ID))));
        return reports;
    }
}
