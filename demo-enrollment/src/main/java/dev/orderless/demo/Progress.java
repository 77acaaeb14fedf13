package dev.orderless.demo;

import java.io.PrintStream;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

/**
 * Prints a progress line every second: rewritten in place on a terminal; otherwise (a pipe, a log) one line
 * each time it changes, and the same line again only after {@value #REPEAT_SECONDS} s, so a wait does
 * not fill the log with copies.
 */
final class Progress implements AutoCloseable {
    private final ScheduledExecutorService timer = Executors.newSingleThreadScheduledExecutor(r -> {
        Thread t = new Thread(r, "progress");
        t.setDaemon(true);
        return t;
    });
    private final PrintStream out;
    private final boolean terminal = System.console() != null;
    private static final int REPEAT_SECONDS = 10;
    private String last = "";
    private long lastAt;

    Progress(PrintStream out, Supplier<String> line) {
        this.out = out;
        timer.scheduleAtFixedRate(() -> print(line.get()), 1, 1, TimeUnit.SECONDS);
    }

    private void print(String line) {
        if (terminal) {
            out.print("\r" + line + "   ");
        } else {
            long now = System.nanoTime();
            if (line.equals(last) && now - lastAt < TimeUnit.SECONDS.toNanos(REPEAT_SECONDS)) {
                return;
            }
            last = line;
            lastAt = now;
            out.println(line);
        }
        out.flush();
    }

    /** "4,000 of 20,000 (1,950/s, about 8 s left)", from when the work started. */
    static String rate(long done, long total, long startedNanos) {
        double seconds = Math.max(1e-3, (System.nanoTime() - startedNanos) / 1e9);
        double perSecond = done / seconds;
        String left = perSecond <= 0 ? "" : String.format(", about %,.0f s left", (total - done) / perSecond);
        return String.format("%,d of %,d (%,.0f/s%s)", done, total, perSecond, done >= total ? "" : left);
    }

    @Override
    public void close() {
        timer.shutdownNow();
        if (terminal) {
            out.println();
        }
    }
}
