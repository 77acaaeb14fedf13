package dev.orderless.demo;

import dev.orderless.apply.Operation;
import dev.orderless.outbox.Outbox;
import dev.orderless.stamp.Stamper;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.function.LongFunction;
import org.bson.BsonString;

/**
 * The simulated web application: students enroll, unenroll (often a moment after enrolling), re-enroll,
 * change their names, graduate or withdraw, and now and then leave school. Each action is stamped when it happens,
 * so the stamps follow each student's real order; the queue may deliver them in any other. As the system of record
 * it knows what each student is enrolled in, so it decides the effect on a student's credits before stamping (an
 * increment only where an enrollment starts or ends), and their status moves forward by rank: the first enrollment
 * makes an applicant ENROLLED. Leaving school (a delete) resets both. Either it only stamps
 * (the caller publishes what {@link #act} returns), or it records each action in an {@link Outbox} as
 * it happens, as a web request would.
 */
public final class WebApp {
    private static final String[] FIRST = {"Ada", "Grace", "Alan", "Edsger", "Barbara", "Donald", "Frances", "Ken",
        "Margaret", "Tony", "Radia", "Leslie", "Niklaus", "Shafi", "John", "Liskov"};
    private static final String[] LAST = {"Lovelace", "Hopper", "Turing", "Dijkstra", "Liskov", "Knuth", "Allen",
        "Thompson", "Hamilton", "Hoare", "Perlman", "Lamport", "Wirth", "Goldwasser", "Backus", "Kay"};

    private final Action taker;
    private final int students;
    private final int classes;
    private final Random random;
    private final java.util.concurrent.atomic.AtomicInteger taken = new java.util.concurrent.atomic.AtomicInteger();
    private final java.util.Map<String, java.util.Set<String>> enrolled = new java.util.HashMap<>();
    private final java.util.Set<String> applied = new java.util.HashSet<>();

    /** What the application does with one action: stamps it, or records it, and returns it. */
    @FunctionalInterface
    interface Action {
        Operation take(String student, LongFunction<Operation> at);
    }

    public WebApp(Stamper stamper, int students, int classes, long seed) {
        this((student, at) -> at.apply(stamper.next(student)), students, classes, seed);
    }

    /** Each action recorded in {@code outbox} (stamped there), durable when {@link #act} returns. */
    public static WebApp recording(Outbox outbox, int students, int classes, long seed) {
        return new WebApp(outbox::record, students, classes, seed);
    }

    private WebApp(Action action, int students, int classes, long seed) {
        this.taker = (student, at) -> {
            Operation op = action.take(student, at);
            taken.incrementAndGet();
            return op;
        };
        this.students = students;
        this.classes = classes;
        this.random = new Random(seed);
    }

    public static String student(int n) {
        return "student-" + n;
    }

    public static String course(int n) {
        return String.format("CS %03d", 100 + n);
    }

    /** How many actions were stamped (or recorded) so far: for progress lines. */
    public int taken() {
        return taken.get();
    }

    /** {@code count} stamped (or recorded) operations, in the order the users did them. */
    public List<Operation> act(int count) {
        List<Operation> ops = new ArrayList<>(count);
        while (ops.size() < count) {
            String student = student(random.nextInt(students));
            String course = course(random.nextInt(classes));
            int action = random.nextInt(100);
            if (applied.add(student)) {   // first seen, or back after leaving
                ops.add(taker.take(student, seq -> status(student, seq, Enrollment.APPLIED)));
            } else if (action < 45) {
                enroll(student, course, ops, count);
                if (random.nextInt(4) == 0 && ops.size() < count) {
                    drop(student, course, ops, count);   // regrets it a moment later
                }
            } else if (action < 74) {
                drop(student, course, ops, count);
            } else if (action < 95) {
                String name = FIRST[random.nextInt(FIRST.length)] + " " + LAST[random.nextInt(LAST.length)];
                ops.add(taker.take(student, seq -> Operation.assign(student, seq, Enrollment.NAME, new BsonString(name))));
            } else if (action < 97) {
                String status = random.nextBoolean() ? Enrollment.GRADUATED : Enrollment.WITHDRAWN;
                ops.add(taker.take(student, seq -> status(student, seq, status)));
            } else {
                ops.add(taker.take(student, seq -> Operation.delete(student, seq)));
                enrolled.remove(student);
                applied.remove(student);
            }
        }
        return ops;
    }

    /** Enrolls; where the enrollment starts, adds the class's credits and, the first time, makes them ENROLLED. */
    private void enroll(String student, String course, List<Operation> ops, int count) {
        ops.add(taker.take(student, seq -> Operation.add(student, seq, Enrollment.CLASSES, course)));
        if (enrolled.computeIfAbsent(student, s -> new java.util.HashSet<>()).add(course) && ops.size() < count) {
            ops.add(taker.take(student, seq -> Operation.increment(student, seq, Enrollment.CREDITS,
                    Enrollment.creditsOf(course))));
            if (enrolled.get(student).size() == 1 && ops.size() < count) {
                ops.add(taker.take(student, seq -> status(student, seq, Enrollment.ENROLLED)));
            }
        }
    }

    /** Unenrolls; where an enrollment ends, takes the class's credits back. */
    private void drop(String student, String course, List<Operation> ops, int count) {
        ops.add(taker.take(student, seq -> Operation.remove(student, seq, Enrollment.CLASSES, course)));
        if (enrolled.getOrDefault(student, java.util.Set.of()).contains(course) && ops.size() < count) {
            enrolled.get(student).remove(course);
            ops.add(taker.take(student, seq -> Operation.increment(student, seq, Enrollment.CREDITS,
                    -Enrollment.creditsOf(course))));
        }
    }

    private static Operation status(String student, long seq, String status) {
        return Operation.assign(student, seq, Enrollment.STATUS, new BsonString(status));
    }
}
