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
 * change their names, and now and then leave school. Each action is stamped when it happens, so the
 * stamps follow each student's real order; the queue may deliver them in any other. Either it only stamps
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
            if (action < 45) {
                ops.add(taker.take(student, seq -> Operation.add(student, seq, Enrollment.CLASSES, course)));
                if (random.nextInt(4) == 0 && ops.size() < count) {
                    // regrets it a moment later
                    ops.add(taker.take(student, seq -> Operation.remove(student, seq, Enrollment.CLASSES, course)));
                }
            } else if (action < 75) {
                ops.add(taker.take(student, seq -> Operation.remove(student, seq, Enrollment.CLASSES, course)));
            } else if (action < 97) {
                String name = FIRST[random.nextInt(FIRST.length)] + " " + LAST[random.nextInt(LAST.length)];
                ops.add(taker.take(student, seq -> Operation.assign(student, seq, Enrollment.NAME, new BsonString(name))));
            } else {
                ops.add(taker.take(student, seq -> Operation.delete(student, seq)));
            }
        }
        return ops;
    }
}
