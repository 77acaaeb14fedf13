package dev.orderless.demo;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;

/** One demo command line run in this JVM with the given environment: its exit code and what it printed. */
record CliRun(int exit, String out, String err) {

    static CliRun of(Map<String, String> env, String... args) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        int exit = Cli.execute(env, new PrintStream(out, true, StandardCharsets.UTF_8),
                new PrintStream(err, true, StandardCharsets.UTF_8), args);
        return new CliRun(exit, out.toString(StandardCharsets.UTF_8), err.toString(StandardCharsets.UTF_8));
    }

    /** The {@code RESULT ...} line, or a description of its absence. */
    String result() {
        return out.lines().filter(l -> l.startsWith("RESULT ")).findFirst()
                .orElse("no RESULT line; out:\n" + out + "\nerr:\n" + err);
    }

    List<String> errLines() {
        return err.lines().toList();
    }
}
