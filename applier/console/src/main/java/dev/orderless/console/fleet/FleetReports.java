package dev.orderless.console.fleet;

import static com.mongodb.client.model.Filters.eq;
import static com.mongodb.client.model.Filters.gte;

import com.mongodb.client.MongoCollection;
import com.mongodb.client.model.IndexOptions;
import com.mongodb.client.model.Indexes;
import com.mongodb.client.model.ReplaceOptions;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Date;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import org.bson.Document;

/**
 * The fleet's reports in their MongoDB collection: one document per instance, replaced at each report, its stored
 * field names here and nowhere else, and how a reader judges an instance from its report (up, gone, stopped).
 */
final class FleetReports {
    /** How long a report is kept after an instance's last one: its TTL index drops it then. */
    static final Duration KEPT = Duration.ofDays(1);
    /** An instance silent for this many of its intervals is gone. */
    static final int SILENT_INTERVALS = 3;

    static final String ID = "_id";
    static final String HOST = "host";
    static final String PID = "pid";
    static final String APPLICATION = "application";
    static final String STARTED = "started";
    static final String REPORTED_AT = "reportedAt";
    static final String INTERVAL = "interval";
    static final String STOPPED_AT = "stoppedAt";
    static final String CONSUMERS = "consumers";
    static final String FEEDERS = "feeders";
    static final String PASSES = "passes";
    static final String OUTBOX = "outbox";
    private static final String TTL_INDEX = "orderless_fleet_reported_at_ttl";

    /** What the fleet says of an instance. */
    enum State {
        /** It reported within {@value #SILENT_INTERVALS} of its intervals. */
        UP,
        /** Silent for {@value #SILENT_INTERVALS} of its intervals, without a goodbye: killed, hung or cut off. */
        GONE,
        /** It said goodbye on a clean shutdown. */
        STOPPED
    }

    private final MongoCollection<Document> collection;

    FleetReports(MongoCollection<Document> collection) {
        this.collection = collection;
    }

    String name() {
        return collection.getNamespace().getCollectionName();
    }

    /** The TTL index that drops a report {@link #KEPT} after it was last written; harmless when it exists. */
    void ensureIndex(Duration timeout) {
        bounded(timeout).createIndex(Indexes.ascending(REPORTED_AT),
                new IndexOptions().name(TTL_INDEX).expireAfter(KEPT.toSeconds(), TimeUnit.SECONDS));
    }

    /** Replaces (or inserts) the instance's report. */
    void write(Document report, Duration timeout) {
        bounded(timeout).replaceOne(eq(ID, report.get(ID)), report, new ReplaceOptions().upsert(true));
    }

    /**
     * Marks the instance's last report as its goodbye: stopped now. Only what the fleet needs to show it stopped is
     * written, so the goodbye reads nothing (a report's figures may need MongoDB, which may be what is failing).
     */
    void goodbye(String id, Instant at, Duration timeout) {
        bounded(timeout).updateOne(eq(ID, id), com.mongodb.client.model.Updates.combine(
                com.mongodb.client.model.Updates.set(STOPPED_AT, Date.from(at)),
                com.mongodb.client.model.Updates.set(REPORTED_AT, Date.from(at))));
    }

    /** Every report written since {@code since}, read within {@code timeout}. */
    List<Document> since(Instant since, Duration timeout) {
        return bounded(timeout).find(gte(REPORTED_AT, Date.from(since))).into(new ArrayList<>());
    }

    /** The collection with the driver's client-side operation timeout: a MongoDB that does not answer costs that. */
    private MongoCollection<Document> bounded(Duration timeout) {
        return collection.withTimeout(Math.max(timeout.toMillis(), 1000), TimeUnit.MILLISECONDS);
    }

    /** The report of {@code instance}: its identity, when, how often it reports, and what runs in it. */
    static Document report(Instance instance, InstanceSnapshot snapshot, Duration interval, Instant now,
                           Optional<Instant> stoppedAt) {
        Document report = new Document(ID, instance.id()).append(HOST, instance.host()).append(PID, instance.pid());
        instance.application().ifPresent(name -> report.append(APPLICATION, name));
        report.append(STARTED, Date.from(instance.started())).append(REPORTED_AT, Date.from(now))
                .append(INTERVAL, interval.toString());
        stoppedAt.ifPresent(at -> report.append(STOPPED_AT, Date.from(at)));
        report.append(CONSUMERS, snapshot.consumers()).append(FEEDERS, snapshot.reportedFeeders())
                .append(PASSES, snapshot.passes());
        snapshot.outbox().ifPresent(outbox -> report.append(OUTBOX, outbox));
        return report;
    }

    /** When the report was written, if it says (a report written by hand may not). */
    static Optional<Instant> reportedAt(Document report) {
        return report.get(REPORTED_AT) instanceof Date at ? Optional.of(at.toInstant()) : Optional.empty();
    }

    /** How often the instance said it reports; 5 s when its report does not say. */
    static Duration interval(Document report) {
        try {
            Duration interval = Duration.parse(String.valueOf(report.get(INTERVAL)));
            return interval.isNegative() || interval.isZero() ? Duration.ofSeconds(5) : interval;
        } catch (java.time.format.DateTimeParseException e) {
            return Duration.ofSeconds(5);
        }
    }

    /** How long the instance has been silent at {@code now}, by the reader's clock; never negative. */
    static Duration silent(Document report, Instant now) {
        Duration silent = reportedAt(report).map(at -> Duration.between(at, now)).orElse(KEPT);
        return silent.isNegative() ? Duration.ZERO : silent;
    }

    /**
     * What the fleet says of the instance at {@code now}: {@link State#STOPPED} if it said goodbye, {@link State#GONE}
     * if silent longer than {@value #SILENT_INTERVALS} of its intervals, else {@link State#UP}.
     */
    static State state(Document report, Instant now) {
        if (report.get(STOPPED_AT) != null) {
            return State.STOPPED;
        }
        return silent(report, now).compareTo(interval(report).multipliedBy(SILENT_INTERVALS)) > 0 ? State.GONE
                : State.UP;
    }

    /** The report as the page reads it: instants as ISO-8601, how long silent, and what the fleet says. */
    static Map<String, Object> describe(Document report, Instant now) {
        Map<String, Object> instance = new LinkedHashMap<>();
        instance.put("id", String.valueOf(report.get(ID)));
        instance.put(HOST, report.get(HOST));
        instance.put(PID, report.get(PID));
        if (report.get(APPLICATION) != null) {
            instance.put(APPLICATION, report.get(APPLICATION));
        }
        instance.put(STARTED, report.get(STARTED) instanceof Date at ? at.toInstant().toString() : null);
        instance.put(REPORTED_AT, reportedAt(report).map(Instant::toString).orElse(null));
        instance.put("silentSeconds", silent(report, now).toSeconds());
        instance.put("state", state(report, now).name());
        instance.put(INTERVAL, interval(report).toString());
        if (report.get(STOPPED_AT) instanceof Date at) {
            instance.put(STOPPED_AT, at.toInstant().toString());
        }
        instance.put(CONSUMERS, report.getOrDefault(CONSUMERS, List.of()));
        instance.put(FEEDERS, report.getOrDefault(FEEDERS, List.of()));
        instance.put(PASSES, report.getOrDefault(PASSES, List.of()));
        instance.put(OUTBOX, report.get(OUTBOX));
        return instance;
    }
}
