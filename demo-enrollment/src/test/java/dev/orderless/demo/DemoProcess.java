package dev.orderless.demo;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * A demo command as its own OS process on this JVM's class path, with exactly the environment given
 * (no MONGODB_URI or RABBITMQ_URI from CI leaks in) and the demo's own logging configuration, so what it
 * prints is what a user of the jar sees.
 */
final class DemoProcess {
    private DemoProcess() {
    }

    static Process start(Map<String, String> env, Path log, String... args) throws IOException {
        List<String> command = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-Dlogback.configurationFile=logback.xml", "-cp", System.getProperty("java.class.path"),
                Main.class.getName()));
        command.addAll(List.of(args));
        ProcessBuilder builder = new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(log.toFile());
        builder.environment().remove("MONGODB_URI");
        builder.environment().remove("RABBITMQ_URI");
        builder.environment().putAll(env);
        return builder.start();
    }

    /** Runs to the end (at most {@code seconds}); the exit code and every line it printed. */
    static Finished run(int seconds, Map<String, String> env, Path log, String... args) throws Exception {
        long started = System.nanoTime();
        Process process = start(env, log, args);
        try {
            if (!process.waitFor(seconds, TimeUnit.SECONDS)) {
                throw new AssertionError("'" + String.join(" ", args) + "' still running after " + seconds + " s; see " + log);
            }
            return new Finished(process.exitValue(), Files.readAllLines(log), (System.nanoTime() - started) / 1_000_000);
        } finally {
            process.destroyForcibly();
        }
    }

    record Finished(int exit, List<String> lines, long millis) {
        boolean hasStackTrace() {
            return lines.stream().anyMatch(l -> l.startsWith("\tat ") || l.startsWith("Caused by:"));
        }
    }
}
