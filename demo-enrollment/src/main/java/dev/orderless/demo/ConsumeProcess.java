package dev.orderless.demo;

import java.io.IOException;
import java.nio.file.Path;

/**
 * Starts {@code consume} as a separate OS process on this JVM's class path: what the multi-process tests
 * (and anyone scripting a local scale-out) launch and kill.
 */
public final class ConsumeProcess {
    private ConsumeProcess() {
    }

    /** A {@code consume} process with {@code consumers} consumers that exits after {@code idleSeconds} idle. */
    public static Process start(String mongoUri, String rabbitUri, String database, String queue, int consumers,
                                int idleSeconds, Path log) throws IOException {
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        // the demo's own logging (to its output), not a test class path's logback-test.xml
        return new ProcessBuilder(java, "-Dlogback.configurationFile=logback.xml", "-cp",
                System.getProperty("java.class.path"), Main.class.getName(), "consume",
                "--mongo", mongoUri, "--rabbit", rabbitUri, "--database", database, "--queue", queue,
                "--consumers", String.valueOf(consumers), "--exit-when-idle", String.valueOf(idleSeconds))
                .redirectErrorStream(true).redirectOutput(log.toFile()).start();
    }
}
