package dev.orderless.chaos;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.orderless.backends.MongoBackend;
import dev.orderless.backends.rabbit.RabbitBackend;
import dev.orderless.testing.MongoExtension;
import dev.orderless.testing.rabbit.RabbitExtension;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.parallel.Execution;
import org.junit.jupiter.api.parallel.ExecutionMode;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * The example applications (demo-enrollment/example-app and example-core), as a user builds them: against the artifacts this
 * build installed in the local repository ({@code mvn -B install}, the test command), with its own pom.
 * It converges, and its JVM ends within 5 s of its last apply: nothing it started outlives {@code main}.
 */
@ExtendWith({MongoExtension.class, RabbitExtension.class})
class ExampleApplicationTest {
    private static final Path APP = Path.of("../demo-enrollment/example-app");
    private static final String VERSION = "0.1.0-SNAPSHOT";
    /** The local repository this build installs into (-Dmaven.repo.local, as the surefire configuration passes it). */
    private static final Path REPOSITORY = Path.of(System.getProperty("orderless.maven.repo.local",
            Path.of(System.getProperty("user.home"), ".m2", "repository").toString()));

    @Test
    @Execution(ExecutionMode.CONCURRENT)   // the two example builds side by side: each waits on its own Maven
    void the_example_application_built_on_the_installed_artifacts_converges_and_exits_once_it_is_done(
            MongoBackend mongo, RabbitBackend rabbit) throws Exception {
        Optional<String> unusable = installedArtifactsAreThisBuilds();
        unusable.ifPresent(why -> System.out.println("[example] skipped: " + why));
        assumeTrue(unusable.isEmpty(), () -> unusable.orElse(""));

        String classpath = APP.resolve("target/classes") + java.io.File.pathSeparator + build(APP);
        ProcessBuilder run = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-cp", classpath, "example.App").redirectErrorStream(true);
        run.environment().put("MONGODB_URI", mongo.connectionString());
        run.environment().put("RABBITMQ_URI", rabbit.uri().toString());
        Process app = run.start();
        List<String> lines = new CopyOnWriteArrayList<>();
        Thread reader = new Thread(() -> {
            try (BufferedReader out = new BufferedReader(new InputStreamReader(app.getInputStream(), StandardCharsets.UTF_8))) {
                for (String line = out.readLine(); line != null; line = out.readLine()) {
                    lines.add(line);
                }
            } catch (IOException closed) {
                // the process ended
            }
        });
        reader.start();
        try {
            Awaitility.await("the last apply").atMost(java.time.Duration.ofMinutes(2))
                    .until(() -> lines.stream().anyMatch(l -> l.startsWith("LAST APPLY")) || !app.isAlive());
            // the JVM must end by itself soon after: nothing left running (a thread pool's 60 s keep-alive, say)
            assertThat(app.waitFor(5, TimeUnit.SECONDS)).as("the JVM ended within 5 s of its last apply: " + lines)
                    .isTrue();
            reader.join(5_000);
            assertThat(app.exitValue()).as(String.join("\n", lines)).isZero();
            assertThat(lines).contains("LAST APPLY 1000 of 1000 messages handled", "RESULT converged=true students=50");
            System.out.println("[example] " + String.join(" | ", lines));
        } finally {
            app.destroyForcibly();
        }
    }

    @Test
    @Execution(ExecutionMode.CONCURRENT)
    void the_guarded_apply_runs_with_only_orderless_core_and_the_mongodb_driver(MongoBackend mongo) throws Exception {
        Optional<String> unusable = installedArtifactsAreThisBuilds();
        unusable.ifPresent(why -> System.out.println("[example-core] skipped: " + why));
        assumeTrue(unusable.isEmpty(), () -> unusable.orElse(""));
        Path app = Path.of("../demo-enrollment/example-core");
        String classpath = build(app);
        assertThat(classpath.split(java.io.File.pathSeparator)).as("what orderless-core brings")
                .noneMatch(jar -> jar.contains("springframework") || jar.contains("rabbitmq") || jar.contains("jackson"));

        ProcessBuilder run = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-cp", app.resolve("target/classes") + java.io.File.pathSeparator + classpath, "example.CoreApp")
                .redirectErrorStream(true);
        run.environment().put("MONGODB_URI", mongo.connectionString());
        Process process = run.start();
        String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(process.waitFor(1, TimeUnit.MINUTES)).isTrue();
        assertThat(process.exitValue()).as(output).isZero();
        assertThat(output).contains("OUTCOMES [APPLIED, SUPERSEDED, SUPERSEDED, APPLIED]");
        System.out.println("[example-core] " + output.lines().filter(l -> l.startsWith("OUTCOMES")).findFirst().orElse(""));
    }

    /**
     * Builds a standalone example project on the installed artifacts, from the local repository this build uses (and
     * offline if this build is), under its Maven Enforcer rule; its class path (dependencies only).
     */
    private static String build(Path project) throws Exception {
        List<String> command = new java.util.ArrayList<>(List.of("mvn", "-B", "-q", "package",
                "dependency:build-classpath", "-Dmdep.outputFile=target/cp.txt", "-Dorderless.version=" + VERSION,
                "-Dmaven.repo.local=" + REPOSITORY));
        if ("offline=true".equals(System.getProperty("orderless.maven.mode"))) {
            command.add("-o");
        }
        Process build = new ProcessBuilder(command).directory(project.toFile()).redirectErrorStream(true).start();
        String buildOutput = new String(build.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(build.waitFor(3, TimeUnit.MINUTES)).as("the example builds").isTrue();
        assertThat(build.exitValue()).as(buildOutput).isZero();
        return Files.readString(project.resolve("target/cp.txt")).strip();
    }

    @Test
    void getting_started_quotes_the_example_applications_tagged_parts_verbatim() throws IOException {
        String readme = Files.readString(Path.of("../docs/getting-started.md"), StandardCharsets.UTF_8);
        java.util.regex.Matcher region = java.util.regex.Pattern.compile(
                        "// tag::([a-z-]+)\\[]\\n(.*?)\\n\\s*// end::\\1\\[]", java.util.regex.Pattern.DOTALL)
                .matcher(Files.readString(APP.resolve("src/main/java/example/App.java"), StandardCharsets.UTF_8));
        List<String> tags = new java.util.ArrayList<>();
        while (region.find()) {
            tags.add(region.group(1));
            assertThat(readme).as("getting-started.md quotes the '" + region.group(1) + "' part of example-app's App.java")
                    .contains("```java\n" + region.group(2).stripIndent() + "\n```");
        }
        assertThat(tags).containsExactlyInAnyOrder("threads", "consumer", "shutdown");
    }

    /** Why the local repository's orderless jars are not the ones this build made, if they are not. */
    private static Optional<String> installedArtifactsAreThisBuilds() throws IOException {
        Path built = Path.of("../applier/core/target/orderless-core-" + VERSION + ".jar");
        Path installed = REPOSITORY.resolve(Path.of("dev", "orderless", "orderless-core", VERSION,
                "orderless-core-" + VERSION + ".jar"));
        if (!Files.exists(built)) {
            return Optional.of("run the whole build ('mvn -B install'): " + built + " is missing");
        }
        if (!Files.exists(installed) || Files.mismatch(built, installed) != -1) {
            return Optional.of("the local repository does not hold this build's jars: run 'mvn -B install' (the README's"
                    + " test command), which installs them before this test runs");
        }
        return Optional.empty();
    }
}
