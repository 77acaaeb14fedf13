package dev.orderless.demo;

import dev.orderless.apply.EntityState;
import dev.orderless.apply.Operation;
import dev.orderless.history.History;
import dev.orderless.history.Version;
import dev.orderless.history.Versions;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.io.PrintStream;
import java.util.Map;
import java.util.stream.Collectors;
import org.bson.BsonValue;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

@Command(name = "history", sortOptions = false,
        header = "A student's versions: every action in seq order, with the student after it; or all, exported.",
        description = {
    "Print the version history of one student as a table: each recorded action in seq order (whatever",
    "order the consumers received them in) and the student's classes, name, credits and status after it. Needs",
    "a history: 'run --history' or 'consume --history' records one (on a MongoDB that outlives the run: serve's,",
    "or yours). Reads MongoDB only (--rabbit and --queue are unused).",
    "With --export FILE instead: every recorded action, one envelope per line, for 'chaos --history FILE'."})
final class HistoryCommand extends DemoCommand {
    @picocli.CommandLine.ArgGroup(multiplicity = "1")
    What what;

    static final class What {
        @Option(names = "--student", paramLabel = "ID", order = 1, required = true,
                description = "The student, e.g. student-7.")
        String student;

        @Option(names = "--export", paramLabel = "FILE", order = 2, required = true,
                description = "Write every recorded action to FILE, one envelope per line.")
        java.nio.file.Path export;
    }

    @Mixin
    Connections connections;

    @Override
    public Integer call() throws Exception {
        DemoOptions options = connections.required(DemoOptions.ofDefaults("history"), cli.env, false);
        try (Wiring wiring = Wiring.connect(options)) {
            History history = wiring.history(new SimpleMeterRegistry());
            if (history.collection().countDocuments() == 0) {
                cli.out.println("no history in '" + options.database() + "." + Enrollment.STUDENTS_HISTORY + "': record one"
                        + " with 'run --history' or 'consume --history'");
                return 1;
            }
            if (what.export != null) {
                return export(history, what.export, cli.out);
            }
            String student = what.student;
            Versions versions = history.versions(student);
            if (versions.versions().isEmpty() && versions.horizon() == 0) {
                cli.out.println("no recorded action of '" + student + "'");
                return 1;
            }
            print(versions, cli.out);
            return 0;
        }
    }

    /** Writes every recorded action of {@code history} to {@code file}; says how many, and what is missing. */
    static int export(History history, java.nio.file.Path file, PrintStream out) {
        java.util.List<Operation> ops = new java.util.ArrayList<>();
        long folded = history.forEachRecorded(ops::add);
        dev.orderless.testing.chaos.Envelopes.write(file, ops);
        out.printf("exported %,d recorded actions to %s%s%n", ops.size(), file, folded == 0 ? ""
                : "; " + folded + " students began with a folded state, whose earlier actions are gone");
        return 0;
    }

    static void print(Versions versions, PrintStream out) {
        out.printf("%s: %d recorded actions%s%n", versions.entity(), versions.versions().size(), versions.horizon() == 0
                ? "" : versions.baseline() ? "; its actions before the history was on are known as the state the"
                + " baseline took from its document, as of seq " + versions.horizon() + ": " + describe(versions.folded())
                : "; everything up to seq " + versions.horizon() + " folded by retention into: "
                + describe(versions.folded()));
        out.printf("%-8s %-24s %-40s %s%n", "seq", "recorded at", "action", "after it: classes | name | credits | status");
        for (Version v : versions.versions()) {
            out.printf("%-8d %-24s %-40s %s%n", v.seq(), v.recordedAt(), action(v.op()), describe(v.after()));
        }
        versions.unknowable().ifPresent(why -> out.printf("the history cannot vouch for these versions: %s%n", why));
        if (!versions.late().isEmpty()) {
            out.printf("and %d action(s) recorded below the horizon that the states above do not include%n",
                    versions.late().size());
        }
    }

    private static String action(Operation op) {
        if (op instanceof Operation.Add add) {
            return "enroll in " + add.element();
        }
        if (op instanceof Operation.Remove remove) {
            return "drop " + remove.element();
        }
        if (op instanceof Operation.Assign assign) {
            return (assign.field().equals(Enrollment.STATUS) ? "status " : "rename to ") + text(assign.value());
        }
        if (op instanceof Operation.Increment increment) {
            return String.format("credits %+d", increment.delta());
        }
        return "leave";
    }

    private static String describe(EntityState state) {
        Map<String, EntityState.Element> classes = state.live().getOrDefault(Enrollment.CLASSES, Map.of());
        EntityState.Register name = state.registers().get(Enrollment.NAME);
        EntityState.Register status = state.registers().get(Enrollment.STATUS);
        java.math.BigInteger credits = state.counters().get(Enrollment.CREDITS);
        return (classes.isEmpty() ? "-" : classes.keySet().stream().sorted().collect(Collectors.joining(", ")))
                + " | " + (name == null ? "-" : text(name.value())) + " | " + (credits == null ? "-" : credits)
                + " | " + (status == null ? "-" : text(status.value()));
    }

    private static String text(BsonValue value) {
        return value.isString() ? value.asString().getValue() : value.toString();
    }
}
