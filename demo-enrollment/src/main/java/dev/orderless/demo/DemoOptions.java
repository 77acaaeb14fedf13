package dev.orderless.demo;

import dev.orderless.InvalidConfigurationException;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * The demo's command line, parsed and checked in one place; a bad value fails with a message that says
 * what to change.
 *
 * @param command   run (default), consume, view or publish
 * @param mongo     --mongo URI (else MONGODB_URI, else embedded)
 * @param rabbit    --rabbit URI (else RABBITMQ_URI, else embedded)
 * @param database  --database (default enrollment)
 * @param queue     --queue (default enrollment.ops; the dead-letter queue is queue + ".dlq")
 */
record DemoOptions(String command, int students, int classes, int ops, int consumers, long seed, boolean shuffle,
                   double duplicateRate, int poison, Optional<String> mongo, Optional<String> rabbit, String database,
                   String queue, int exitWhenIdleSeconds) {

    private static final Set<String> COMMANDS = Set.of("run", "consume", "view", "publish");
    private static final Set<String> FLAGS = Set.of("--shuffle");
    private static final Set<String> VALUED = Set.of("--students", "--classes", "--ops", "--consumers", "--seed",
            "--duplicate-rate", "--poison", "--mongo", "--rabbit", "--database", "--queue", "--exit-when-idle");

    static DemoOptions parse(String... args) {
        String command = "run";
        int i = 0;
        if (args.length > 0 && !args[0].startsWith("--")) {
            command = args[0];
            if (!COMMANDS.contains(command)) {
                throw new InvalidConfigurationException("unknown command '" + command + "': use run, consume, view or publish");
            }
            i = 1;
        }
        Map<String, String> values = new HashMap<>();
        for (; i < args.length; i++) {
            String arg = args[i];
            if (FLAGS.contains(arg)) {
                values.put(arg, "true");
            } else if (VALUED.contains(arg)) {
                if (i + 1 >= args.length) {
                    throw new InvalidConfigurationException(arg + " needs a value");
                }
                values.put(arg, args[++i]);
            } else {
                throw new InvalidConfigurationException("unknown option '" + arg + "'; options: " + VALUED + " " + FLAGS);
            }
        }
        DemoOptions options = new DemoOptions(command,
                integer(values, "--students", 200, 1, 1_000_000),
                integer(values, "--classes", 20, 1, 10_000),
                integer(values, "--ops", 5000, 0, 10_000_000),
                integer(values, "--consumers", 4, 1, 64),
                Long.parseLong(values.getOrDefault("--seed", "1")),
                values.containsKey("--shuffle"),
                rate(values),
                integer(values, "--poison", 0, 0, 1_000_000),
                Optional.ofNullable(values.get("--mongo")),
                Optional.ofNullable(values.get("--rabbit")),
                values.getOrDefault("--database", Enrollment.DATABASE),
                values.getOrDefault("--queue", Enrollment.QUEUE),
                integer(values, "--exit-when-idle", 0, 0, 86_400));
        return options;
    }

    String deadLetterQueue() {
        return queue.equals(Enrollment.QUEUE) ? Enrollment.DEAD_LETTER_QUEUE : queue + ".dlq";
    }

    private static int integer(Map<String, String> values, String name, int fallback, int min, int max) {
        String value = values.get(name);
        if (value == null) {
            return fallback;
        }
        try {
            int n = Integer.parseInt(value.replace("_", ""));
            if (n < min || n > max) {
                throw new InvalidConfigurationException(name + " must be between " + min + " and " + max + ", was " + n);
            }
            return n;
        } catch (NumberFormatException e) {
            throw new InvalidConfigurationException(name + " must be a whole number, was '" + value + "'");
        }
    }

    private static double rate(Map<String, String> values) {
        String value = values.getOrDefault("--duplicate-rate", "0");
        try {
            double rate = Double.parseDouble(value);
            if (rate < 0 || rate > 1) {
                throw new InvalidConfigurationException("--duplicate-rate must be between 0 and 1, was " + value);
            }
            return rate;
        } catch (NumberFormatException e) {
            throw new InvalidConfigurationException("--duplicate-rate must be a number between 0 and 1, was '" + value + "'");
        }
    }
}
