package dev.orderless.demo;

import dev.orderless.backends.EmbeddedMongo;
import dev.orderless.backends.rabbit.EmbeddedQpid;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code serve}: the embedded MongoDB (with its oplog, so change streams work) and the embedded AMQP
 * broker, in memory, for several demo processes to share. Its standard output is exactly two lines a
 * shell can {@code eval}; everything else goes to standard error. With {@code --detach} it starts itself
 * in the background, as {@code ssh-agent} does, prints the same two lines once the backends answer, and
 * exits.
 */
@Command(name = "serve", sortOptions = false,
        header = "Start the embedded MongoDB and AMQP broker for several processes to share.",
        description = {
    "Start the embedded MongoDB and AMQP broker, in memory, until stopped, and print the two lines that",
    "point the other commands at them:",
    "  export MONGODB_URI=mongodb://127.0.0.1:27018",
    "  export RABBITMQ_URI=amqp://guest:guest@127.0.0.1:5673/%%2F",
    "Use: eval \"$(java -jar demo-enrollment.jar serve --detach)\"   (or run it in another terminal)",
    "If a serve already answers on both ports, --detach prints its two lines again. If it cannot start, it",
    "prints 'false' for eval to fail on, and says why on standard error."})
final class ServeCommand extends DemoCommand {
    static final String MONGO_LINE = "export MONGODB_URI=";
    static final String RABBIT_LINE = "export RABBITMQ_URI=";
    static final String CONSOLE_LINE = "serve: console at ";
    private static final int DETACH_SECONDS = 60;

    @Option(names = "--mongo-port", paramLabel = "PORT", order = 1, defaultValue = "27018",
            description = "MongoDB port on 127.0.0.1; 0 for any free port (default: ${DEFAULT-VALUE}).")
    int mongoPort;

    @Option(names = "--amqp-port", paramLabel = "PORT", order = 2, defaultValue = "5673",
            description = "AMQP port on 127.0.0.1; 0 for any free port (default: ${DEFAULT-VALUE}).")
    int amqpPort;

    @Option(names = "--detach", order = 3,
            description = "Run in the background: print the two lines once both answer, then return.")
    boolean detach;

    @Option(names = "--log", paramLabel = "FILE", order = 4,
            description = "With --detach, where the background process writes its output"
                    + " (default: orderless-serve-<pid of the launching command>.log in the temporary directory).")
    Path log;

    @Option(names = "--verbose", order = 5, description = "Print the stack trace of a failure.")
    boolean verbose;

    @Option(names = "--console", order = 6,
            description = "Also run the demo's consumers, rosters feeder and history here, with the operator console"
                    + " on 127.0.0.1 (its address and logins go to standard error).")
    boolean console;

    @Option(names = "--console-port", paramLabel = "PORT", order = 7, defaultValue = "8080",
            description = "With --console, its port; 0 for any free port (default: ${DEFAULT-VALUE}).")
    int consolePort;

    @Override
    public Integer call() throws Exception {
        return detach ? detached() : serve();
    }

    private int serve() throws Exception {
        if (console && inUse(consolePort)) {   // before the backends: a busy port fails alone, naming its option
            throw new dev.orderless.InvalidConfigurationException("port " + consolePort + " is in use: choose a free"
                    + " one with --console-port (0: any)");
        }
        try (EmbeddedMongo mongo = onPort("--mongo-port", () -> EmbeddedMongo.start(mongoPort));
             EmbeddedQpid broker = onPort("--amqp-port", () -> EmbeddedQpid.start(amqpPort));
             StopSignal stop = new StopSignal();
             // the console before the two lines: whoever waits for them (--detach) finds the console up too
             AutoCloseable consoleApp = console ? startConsole(mongo.connectionString(), broker.uri().toString())
                     : () -> { }) {
            cli.out.println(MONGO_LINE + mongo.connectionString());
            cli.out.println(RABBIT_LINE + broker.uri());
            cli.out.flush();
            cli.err.println("serve: " + mongo.description() + " and " + broker.description() + " are up, in memory;"
                    + " Ctrl-C or 'kill " + ProcessHandle.current().pid() + "' stops them and forgets everything");
            while (!stop.await(60_000)) {
                // up until stopped
            }
            cli.err.println("serve: stopping");
        }
        return 0;
    }

    /** The demo's pipeline and its console, on the backends just started; closing stops both and disconnects. */
    private AutoCloseable startConsole(String mongoUri, String rabbitUri) {
        DemoOptions options = DemoOptions.ofDefaults("serve").withHistory(true)
                .withBackends(java.util.Optional.of(mongoUri), java.util.Optional.of(rabbitUri));
        Wiring wiring = Wiring.connect(options);
        try {
            DemoBoot.ConsoleUsers users = DemoBoot.ConsoleUsers.random();
            org.springframework.context.ConfigurableApplicationContext app = DemoBoot.console(wiring,
                    new io.micrometer.core.instrument.simple.SimpleMeterRegistry(), consolePort, users);
            cli.err.println(CONSOLE_LINE + DemoBoot.consoleUrl(app) + " (log in as operator / "
                    + users.operatorPassword() + " to replay, park and purge; viewer / " + users.viewerPassword()
                    + " to look); publish to queue '" + options.queue() + "' with the other commands");
            cli.err.flush();
            return () -> {
                app.close();
                wiring.close();
            };
        } catch (RuntimeException e) {
            wiring.close();
            throw e;
        }
    }

    private static boolean inUse(int port) {
        if (port == 0) {
            return false;
        }
        try (java.net.ServerSocket socket = new java.net.ServerSocket()) {
            socket.bind(new java.net.InetSocketAddress("127.0.0.1", port));
            return false;
        } catch (IOException e) {
            return true;
        }
    }

    /** A port in use says which option chooses another. */
    private static <T> T onPort(String option, java.util.function.Supplier<T> start) {
        try {
            return start.get();
        } catch (IllegalStateException | IllegalArgumentException e) {
            throw new dev.orderless.InvalidConfigurationException(e.getMessage() + " (" + option + ")", e);
        }
    }

    /** Starts {@code serve} in a new process, waits for its two lines, prints them and returns. */
    private int detached() throws IOException, InterruptedException {
        java.util.OptionalInt busy = java.util.stream.IntStream.of(mongoPort, amqpPort).filter(ServeCommand::inUse).findFirst();
        if (busy.isPresent()) {
            if (aServeAnswers(mongoPort, amqpPort)) {   // most likely a serve started earlier: point this shell at it
                cli.out.println(MONGO_LINE + "mongodb://127.0.0.1:" + mongoPort);
                cli.out.println(RABBIT_LINE + "amqp://guest:guest@127.0.0.1:" + amqpPort + "/%2F");
                cli.out.flush();
                cli.err.println("serve: already running on ports " + mongoPort + " and " + amqpPort + "; pointing this"
                        + " shell at it");
                return 0;
            }
            return refuse("port " + busy.getAsInt() + " is in use by something that is not a demo serve (MongoDB and"
                    + " AMQP do not both answer there): choose free ports with --mongo-port and --amqp-port (0: any)");
        }
        Path output = log != null ? log : Path.of(System.getProperty("java.io.tmpdir"),
                "orderless-serve-" + ProcessHandle.current().pid() + ".log");
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        List<String> command = new java.util.ArrayList<>(List.of(java, "-cp", System.getProperty("java.class.path"),
                Main.class.getName(), "serve", "--mongo-port", String.valueOf(mongoPort), "--amqp-port",
                String.valueOf(amqpPort)));
        if (console) {   // its address and logins are in the background process's output
            command.addAll(List.of("--console", "--console-port", String.valueOf(consolePort)));
        }
        Process child = new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(output.toFile()).start();
        child.getOutputStream().close();
        // until the lines are handed over, a child of a parent that is stopped must not outlive it unseen
        Thread orphanGuard = new Thread(child::destroy, "serve-orphan-guard");
        Runtime.getRuntime().addShutdownHook(orphanGuard);
        try {
            return awaitExports(child, output);
        } finally {
            try {
                Runtime.getRuntime().removeShutdownHook(orphanGuard);
            } catch (IllegalStateException e) {
                // shutting down: the guard runs
            }
        }
    }

    private int awaitExports(Process child, Path output) throws IOException, InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(DETACH_SECONDS);
        while (System.nanoTime() < deadline) {
            List<String> lines = Files.readAllLines(output, StandardCharsets.UTF_8);
            List<String> exports = lines.stream().filter(l -> l.startsWith("export ")).toList();
            if (exports.size() == 2) {
                exports.forEach(cli.out::println);
                cli.out.flush();
                lines.stream().filter(l -> l.startsWith(CONSOLE_LINE)).forEach(cli.err::println);
                cli.err.println("serve: running in the background as pid " + child.pid() + " (output: " + output
                        + "); stop it with: kill " + child.pid());
                return 0;
            }
            if (child.waitFor(100, TimeUnit.MILLISECONDS)) {
                Files.readAllLines(output, StandardCharsets.UTF_8).stream().filter(l -> l.startsWith("error:"))
                        .forEach(cli.err::println);
                return refuse("the background process exited with " + child.exitValue() + "; see " + output);
            }
        }
        child.destroy();
        return refuse("the embedded backends did not start within " + DETACH_SECONDS + " s; see " + output);
    }

    /**
     * Fails so that {@code eval "$(serve --detach)"} fails too: 'false' on standard output for the shell, the
     * reason on standard error for the person.
     */
    private int refuse(String why) {
        cli.out.println("false");
        cli.out.flush();
        cli.err.println("error: serve: " + why);
        return 1;
    }

    /** True if MongoDB answers a ping on {@code mongoPort} and an AMQP broker accepts guest on {@code amqpPort}. */
    private static boolean aServeAnswers(int mongoPort, int amqpPort) {
        try (com.mongodb.client.MongoClient client = com.mongodb.client.MongoClients.create(
                com.mongodb.MongoClientSettings.builder()
                        .applyConnectionString(new com.mongodb.ConnectionString("mongodb://127.0.0.1:" + mongoPort))
                        .applyToClusterSettings(c -> c.serverSelectionTimeout(2, TimeUnit.SECONDS)).build())) {
            client.getDatabase("admin").runCommand(new org.bson.Document("ping", 1));
        } catch (RuntimeException e) {
            return false;
        }
        com.rabbitmq.client.ConnectionFactory amqp = new com.rabbitmq.client.ConnectionFactory();
        amqp.setHost("127.0.0.1");
        amqp.setPort(amqpPort);
        amqp.setConnectionTimeout(2000);
        amqp.setHandshakeTimeout(2000);
        try (com.rabbitmq.client.Connection connection = amqp.newConnection()) {
            return connection.isOpen();
        } catch (IOException | java.util.concurrent.TimeoutException | RuntimeException e) {
            return false;
        }
    }
}
