package dev.orderless.demo;

import java.io.PrintStream;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

/** Prints a progress line every second: rewritten in place on a terminal, one line each otherwise. */
final class Progress implements AutoCloseable {
    private final ScheduledExecutorService timer = Executors.newSingleThreadScheduledExecutor(r -> {
        Thread t = new Thread(r, "progress");
        t.setDaemon(true);
        return t;
    });
    private final PrintStream out;
    private final boolean terminal = System.console() != null;

    Progress(PrintStream out, Supplier<String> line) {
        this.out = out;
        timer.scheduleAtFixedRate(() -> print(line.get()), 1, 1, TimeUnit.SECONDS);
    }

    private void print(String line) {
        if (terminal) {
            out.print("\r" + line + "   ");
        } else {
            out.println(line);
        }
        out.flush();
    }

    @Override
    public void close() {
        timer.shutdownNow();
        if (terminal) {
            out.println();
        }
    }
}
