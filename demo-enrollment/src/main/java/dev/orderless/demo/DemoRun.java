package dev.orderless.demo;

import dev.orderless.amqp.OperationConsumer;
import dev.orderless.history.History;
import dev.orderless.history.Versions;
import dev.orderless.apply.EntityState;
import dev.orderless.apply.Operation;
import dev.orderless.oracle.ReferenceModel;
import dev.orderless.publish.PublisherOptions;
import dev.orderless.view.ViewFeeder;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.io.PrintStream;
import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.springframework.amqp.rabbit.core.RabbitAdmin;

/**
 * {@code run}: the whole story in one process. A simulated web application stamps and publishes student
 * actions (optionally shuffled, duplicated and mixed with poison); N competing consumers apply them; the
 * roster feeder keeps the class rosters view; then every student document is compared with the
 * sequential oracle and every roster with the rosters derived from the students.
 */
final class DemoRun {
    private final Wiring w;
    private final DemoOptions o;
    private final PrintStream out;
    private final java.util.OptionalInt consolePort;

    DemoRun(Wiring wiring, PrintStream out) {
        this(wiring, out, java.util.OptionalInt.empty());
    }

    /** With a console port: after the result, the consumers, feeder and console stay up until Ctrl-C. */
    DemoRun(Wiring wiring, PrintStream out, java.util.OptionalInt consolePort) {
        this.w = wiring;
        this.o = wiring.options;
        this.out = out;
        this.consolePort = consolePort;
    }

    /** @return the process exit code: 0 only if converged, nothing lost and the rosters consistent */
    int run() throws Exception {
        out.println("orderless enrollment demo: " + o.ops() + " actions by " + o.students() + " students in "
                + o.classes() + " classes, " + o.consumers() + " consumers, seed " + o.seed()
                + (o.shuffle() ? ", shuffled" : "") + (o.duplicateRate() > 0 ? ", duplicate rate " + o.duplicateRate() : "")
                + (o.poison() > 0 ? ", " + o.poison() + " poison" : "") + (o.outbox() ? ", through the outbox" : ""));
        out.println(w.describe());
        freshStart();
        SimpleMeterRegistry meters = new SimpleMeterRegistry();
        Counts counts = new Counts(meters);

        // through the outbox, every action is durable before the consumers (or the broker) see anything
        WebApp web = o.outbox() ? WebApp.recording(w.outbox(), o.students(), o.classes(), o.seed())
                : new WebApp(w.stamper(), o.students(), o.classes(), o.seed());
        List<Operation> ops = ProcessCommands.acting(web, o.ops(), o.outbox() ? "recording" : "stamping", out);
        List<byte[]> messages = Messages.messages(ops, o);
        w.journal.recordPublished(ops, messages.size(), o.poison());
        int good = messages.size() - o.poison();

        long started;
        long consumed;
        long consistent = -1;
        java.util.concurrent.atomic.AtomicBoolean waitingForView = new java.util.concurrent.atomic.AtomicBoolean();
        boolean kafka = o.broker() == Broker.KAFKA;
        try (AutoCloseable consumer = kafka ? w.startShareConsumers(meters) : w.startConsumers(meters);
             ViewFeeder feeder = w.startRosterFeeder(meters);
             AutoCloseable relay = o.outbox() ? w.startRelay(meters, 500, Duration.ofSeconds(10)) : () -> { };
             Progress progress = new Progress(out, () -> waitingForView.get()
                     ? String.format("  every message handled; waiting for the rosters view to match the students"
                     + " (view events applied so far: %,.0f)", counts.viewEvents())
                     : String.format("  handled %,d of %,d messages: applied %,.0f, stale %,.0f, dead-lettered %,.0f;"
                     + " view events %,.0f", (long) counts.handled(), messages.size(), counts.applied(), counts.stale(),
                     counts.deadLettered(), counts.viewEvents()))) {
            started = System.nanoTime();
            if (kafka) {
                try (dev.orderless.kafka.KafkaOperationPublisher publisher = w.kafka().publisher()) {
                    publisher.publishRaw(messages);
                }
            } else if (!o.outbox()) {
                w.publisher(PublisherOptions.ofDefaults()).publishRaw(messages);
            }
            long deadline = System.nanoTime() + Duration.ofSeconds(120 + messages.size() / 50).toNanos();
            while (counts.handled() < messages.size() && System.nanoTime() < deadline) {
                Thread.sleep(50);
            }
            consumed = System.nanoTime();
            waitingForView.set(true);
            long viewDeadline = System.nanoTime() + Duration.ofSeconds(120).toNanos();
            // comparing reads every student and roster: not while the view is visibly still catching up
            ComparePacing pacing = new ComparePacing(Duration.ofSeconds(5), System.nanoTime());
            while (System.nanoTime() < viewDeadline) {
                if (pacing.compareNow(counts.viewEvents(), System.nanoTime())
                        && Rosters.inView(w.rosters).equals(Rosters.fromStudents(w.students))) {
                    consistent = System.nanoTime();
                    break;
                }
                Thread.sleep(100);
            }
            if (consolePort.isPresent()) {   // the result first, then the console over what is still running
                progress.close();   // its lines would follow the result
                w.journal.tally("run", counts);
                int code = report(ops, good, counts, started, consumed, consistent);
                serveConsole((OperationConsumer) consumer, feeder, meters);
                return code;
            }
        }
        w.journal.tally("run", counts);
        return report(ops, good, counts, started, consumed, consistent);
    }

    /** {@code run --console}: the console over this run's consumers, feeder and history, until Ctrl-C or SIGTERM. */
    private void serveConsole(OperationConsumer consumer, ViewFeeder feeder, SimpleMeterRegistry meters)
            throws InterruptedException {
        dev.orderless.console.ConsoleSources.Builder sources = dev.orderless.console.ConsoleSources
                .builder(w.students, Enrollment.STUDENT_SCHEMA)
                .consumer(dev.orderless.console.ConsoleSources.Consumer.of(consumer, w.rabbit()))
                .feeder(Enrollment.ROSTERS, () -> java.util.Optional.of(feeder)).meters(meters);
        if (o.history()) {
            sources.history(w.history(meters));
        }
        DemoBoot.ConsoleUsers users = DemoBoot.ConsoleUsers.random();
        try (org.springframework.context.ConfigurableApplicationContext app = DemoBoot.console(w, sources.build(),
                consolePort.getAsInt(), users);
             StopSignal stop = new StopSignal()) {
            out.println();
            out.println("console at " + DemoBoot.consoleUrl(app) + " (log in as operator / " + users.operatorPassword()
                    + " to replay, park and purge; viewer / " + users.viewerPassword() + " to look); the consumers"
                    + " and the feeder keep running until Ctrl-C");
            out.flush();
            while (!stop.await(60_000)) {
                // up until stopped
            }
        }
    }

    /** The demo owns its database and queues: start each run from nothing. */
    private void freshStart() {
        Set<String> existing = w.db.listCollectionNames().into(new HashSet<>());
        List<String> ours = new java.util.ArrayList<>(List.of(Enrollment.STUDENTS, Enrollment.ROSTERS,
                Enrollment.ROSTERS + "_dead_letters", "leases", Enrollment.COUNTERS, Enrollment.OUTBOX,
                Enrollment.STUDENTS_HISTORY));
        ours.addAll(Journal.COLLECTIONS);
        for (String collection : ours) {
            if (existing.contains(collection)) {
                w.db.getCollection(collection).drop();
            }
        }
        if (o.broker() == Broker.KAFKA) {
            w.kafka().declare();
            out.println("fresh start: dropped the demo collections in '" + o.database() + "', a topic and share group of"
                    + " this run's own");
            return;
        }
        w.declareQueues();
        RabbitAdmin admin = new RabbitAdmin(w.rabbit());
        admin.purgeQueue(o.queue(), false);
        admin.purgeQueue(o.deadLetterQueue(), false);
        out.println("fresh start: dropped the demo collections in '" + o.database() + "', purged both queues");
    }

    private int report(List<Operation> ops, int good, Counts counts, long started, long consumed, long consistent) {
        Map<String, EntityState> expected = new ReferenceModel(Enrollment.STUDENT_SCHEMA).replay(ops);
        Map<String, EntityState> stored = EntityState.readAll(w.students.find(), Enrollment.STUDENT_SCHEMA);
        long diverged = ReferenceModel.diverged(expected, stored).size();
        long applied = (long) counts.applied();
        long stale = (long) counts.stale();
        long deadLettered = (long) counts.deadLettered();
        // counted (messages neither applied nor stale) or seen (effects the oracle shows and MongoDB lacks):
        // a redelivery counted twice cannot hide a loss that the state shows
        long lost = Math.max(Math.max(0, good - applied - stale), ReferenceModel.missingEffects(expected, stored));
        boolean rostersConsistent = consistent > 0;
        double seconds = (consumed - started) / 1e9;

        out.println();
        out.printf("  %-15s %,d messages (%,d actions + %,d duplicates) + %,d poison%n", "published", good, ops.size(),
                good - ops.size(), o.poison());
        out.printf("  %-15s %,d%n", "applied", applied);
        out.printf("  %-15s %,d (superseded %,.0f, duplicate %,.0f, seq collision %,.0f)%n", "stale", stale,
                counts.outcome(dev.orderless.apply.Outcome.SUPERSEDED), counts.outcome(dev.orderless.apply.Outcome.DUPLICATE),
                counts.outcome(dev.orderless.apply.Outcome.SEQ_COLLISION));
        if (good > ops.size()) {
            out.printf("  %-15s a copy counts as 'duplicate' when it finds its own entry still there, else as"
                    + " 'superseded'%n", "");
        }
        out.printf("  %-15s %,d%s%n", "dead-lettered", deadLettered,
                deadLettered == o.poison() ? " (= poison published)" : " (poison published: " + o.poison() + "!)");
        if (o.broker() == Broker.KAFKA) {
            reportDeadLetterTopic();
        }
        out.printf("  %-15s %,.0f messages/s (%.1f s from first publish to last ack; %,.0f MongoDB retries)%n",
                "throughput", (good + o.poison()) / seconds, seconds, counts.retried());
        out.printf("  %-15s %s%n", "view lag", rostersConsistent
                ? String.format("%.2f s after the last ack the rosters matched the students", (consistent - consumed) / 1e9)
                : "rosters still differ after 120 s");
        out.printf("  %-15s %,d students compared with the sequential oracle: %,d diverged%n", "converged",
                expected.size(), diverged);
        out.printf("  %-15s %,d credits in all over %,d students, each student's sum the oracle's: %s%n", "credits",
                stored.values().stream().map(s -> s.counters().getOrDefault(Enrollment.CREDITS, java.math.BigInteger.ZERO))
                        .reduce(java.math.BigInteger.ZERO, java.math.BigInteger::add),
                stored.size(), expected.entrySet().stream().allMatch(e -> stored.containsKey(e.getKey()) && java.util
                        .Objects.equals(e.getValue().counters(), stored.get(e.getKey()).counters())) ? "yes" : "NO");
        out.printf("  %-15s %s%n", "status", statuses(stored));
        boolean historyAgrees = !o.history() || reportHistory(ops.size(), stored);
        int code = Result.compared(expected, stored, good, applied, stale, deadLettered, lost, rostersConsistent)
                .print(out);
        return historyAgrees ? code : 1;
    }

    /**
     * What the dead-letter topic holds, by kind of reason, read back from Kafka: the consumers' count above says
     * what they dead-lettered, this says it is there.
     */
    private void reportDeadLetterTopic() {
        KafkaSide kafka = w.kafka();
        List<dev.orderless.kafka.KafkaDeadLetter> letters = kafka.deadLetters().peek(Math.max(1, o.poison() + 100));
        Map<String, Long> kinds = new java.util.TreeMap<>();
        letters.forEach(letter -> kinds.merge(letter.kind(), 1L, Long::sum));
        out.printf("  %-15s '%s' holds %,d records%s%n", "", kafka.deadLetterTopic(), kafka.deadLettered(),
                kinds.isEmpty() ? "" : " (" + String.join(", ", kinds.entrySet().stream()
                        .map(e -> e.getValue() + " " + e.getKey()).toList()) + ")");
    }

    /** How many students are in each status, highest rank last. */
    private static String statuses(Map<String, EntityState> stored) {
        Map<String, Long> by = new java.util.LinkedHashMap<>();
        for (String status : List.of(Enrollment.APPLIED, Enrollment.ENROLLED, Enrollment.GRADUATED,
                Enrollment.WITHDRAWN)) {
            by.put(status, stored.values().stream().filter(s -> s.registers().containsKey(Enrollment.STATUS)
                    && s.registers().get(Enrollment.STATUS).value().equals(new org.bson.BsonString(status))).count());
        }
        StringBuilder line = new StringBuilder();
        by.forEach((status, n) -> line.append(line.length() == 0 ? "" : ", ").append(String.format("%,d %s", n,
                status.toLowerCase(java.util.Locale.ROOT))));
        return line.toString();
    }

    /**
     * With {@code --history}: how many records, and whether the last version the history gives of each student
     * (up to 1,000 of them) is its document. False if one is not.
     */
    private boolean reportHistory(int actions, Map<String, EntityState> stored) {
        History history = w.history(new SimpleMeterRegistry());
        long records = history.collection().countDocuments(com.mongodb.client.model.Filters.exists("_id.entity"));
        List<String> students = stored.keySet().stream().limit(1000).toList();
        long differ = students.stream().filter(s -> !history.versions(s).current().equals(stored.get(s))).count();
        out.printf("  %-15s %,d records (%,d actions); the last version of %,d students %s%n", "history", records, actions,
                students.size(), differ == 0 ? "equals their documents" : "differs from the document for " + differ + " (!)");
        if (!students.isEmpty()) {
            // the busiest of the first twenty: the most to show
            Versions busiest = students.stream().limit(20).map(history::versions)
                    .max(java.util.Comparator.comparingInt(v -> v.versions().size())).orElseThrow();
            String first = busiest.entity();
            if (o.mongo().isEmpty()) {   // the embedded MongoDB goes with this run: show one student's history now
                out.println();
                HistoryCommand.print(busiest, out);
                out.println();
            } else {
                out.printf("  %-15s 'history --student %s' prints a student's versions%n", "", first);
            }
        }
        return differ == 0;
    }
}
