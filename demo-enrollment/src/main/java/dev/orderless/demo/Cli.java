package dev.orderless.demo;

import dev.orderless.InvalidConfigurationException;
import dev.orderless.TransientException;
import dev.orderless.publish.PublishFailedException;
import java.io.PrintStream;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Map;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * The demo's command line (picocli). Every command answers {@code --help} with exit 0; a bad value or an
 * unknown option is one line naming it, exit 2; a backend that cannot be reached is one line naming its
 * URI and what to check, exit 1; a stack trace only with {@code --verbose}.
 *
 * <p>The environment is passed in rather than read from {@link System#getenv()}, so tests can run a
 * command as a newcomer's shell would (no {@code MONGODB_URI}) on a machine where CI has set one.
 */
@Command(name = "java -jar demo-enrollment.jar",
        description = {"The orderless enrollment demo: students enroll in classes through a RabbitMQ queue that delivers",
            "in any order; competing consumers apply the actions to MongoDB and converge; a change-stream feeder",
            "keeps the class rosters view. With no command, 'run' is meant.", ""},
        synopsisSubcommandLabel = "[COMMAND]",
        subcommands = {RunCommand.class, ServeCommand.class, PublishCommand.class, RelayCommand.class, ConsumeCommand.class,
            CompareCommand.class, ChaosCommand.class,
            ViewCommand.class, VerifyCommand.class, HistoryCommand.class, DeadLettersCommand.class, OutboxCommand.class,
            CommandLine.HelpCommand.class},
        footer = {"", "Several processes on one machine:",
            "  eval \"$(java -jar demo-enrollment.jar serve --detach)\"   # embedded MongoDB and AMQP broker",
            "  java -jar demo-enrollment.jar publish --shuffle --duplicate-rate 0.2 --poison 5",
            "  java -jar demo-enrollment.jar consume --exit-when-idle 5 &   # as many as you like",
            "  java -jar demo-enrollment.jar verify",
            "", "'COMMAND --help' shows a command's options and their defaults."})
final class Cli {
    @Option(names = {"-h", "--help"}, usageHelp = true, description = "Show this help and exit.")
    boolean help;

    final Map<String, String> env;
    final PrintStream out;
    final PrintStream err;

    private Cli(Map<String, String> env, PrintStream out, PrintStream err) {
        this.env = env;
        this.out = out;
        this.err = err;
    }

    /** Runs one command line; returns the exit code (0 done, 1 failed, 2 bad usage). */
    static int execute(Map<String, String> env, PrintStream out, PrintStream err, String... args) {
        String[] line = args.length == 0 || (args[0].startsWith("-") && !isHelp(args[0])) ? withRun(args) : args;
        boolean verbose = Arrays.asList(args).contains("--verbose");
        CommandLine commandLine = new CommandLine(new Cli(env, out, err))
                .setUsageHelpWidth(110)
                .registerConverter(java.time.Duration.class, new Durations())
                .setOut(new PrintWriter(out, true, StandardCharsets.UTF_8))
                .setErr(new PrintWriter(err, true, StandardCharsets.UTF_8))
                .setParameterExceptionHandler((e, ignored) -> {
                    CommandLine at = e.getCommandLine();
                    boolean unknownCommand = at.getCommandSpec().parent() == null
                            && e instanceof CommandLine.UnmatchedArgumentException;
                    String suggestion = e instanceof CommandLine.UnmatchedArgumentException unmatched
                            && !unmatched.getSuggestions().isEmpty()
                            ? "; did you mean " + String.join(" or ", unmatched.getSuggestions()) + "?" : "";
                    at.getErr().println("error: " + (unknownCommand ? "unknown command '" + line[0] + "': the commands are "
                            + String.join(", ", at.getSubcommands().keySet()) : e.getMessage()) + suggestion
                            + " (see '" + at.getCommandSpec().qualifiedName() + " --help')");
                    return 2;
                })
                .setExecutionExceptionHandler((e, command, parsed) -> failed(e, verbose, err));
        return commandLine.execute(line);
    }

    /** No command, or options first: the all-in-one {@code run}. */
    private static String[] withRun(String[] args) {
        String[] line = new String[args.length + 1];
        line[0] = "run";
        System.arraycopy(args, 0, line, 1, args.length);
        return line;
    }

    private static boolean isHelp(String arg) {
        return arg.equals("-h") || arg.equals("--help");
    }

    /** One line saying what failed and what to check; the stack only when asked for. */
    private static int failed(Exception e, boolean verbose, PrintStream err) {
        int code;
        if (e instanceof InvalidConfigurationException || e instanceof dev.orderless.InvalidInputException) {
            code = 2;
            err.println("error: " + e.getMessage());
        } else if (e instanceof TransientException || e instanceof PublishFailedException) {
            code = 1;
            err.println("error: " + e.getMessage());
        } else {
            code = 1;
            err.println("error: " + e + (verbose ? "" : " (run with --verbose for the stack trace)"));
            // unexpected: its stack goes to the log as well, so that a failure seen once can be read afterwards
            org.slf4j.LoggerFactory.getLogger(Cli.class).error("command failed unexpectedly", e);
        }
        if (verbose) {
            e.printStackTrace(err);
        }
        return code;
    }
}
