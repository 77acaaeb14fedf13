package dev.orderless.demo;

import dev.orderless.InvalidConfigurationException;

/**
 * The enrollment demo's entry point.
 *
 * <pre>
 * java -jar demo-enrollment.jar [run] [--students N] [--classes N] [--ops N] [--consumers N] [--seed N]
 *                                     [--shuffle] [--duplicate-rate R] [--poison N] [--mongo URI] [--rabbit URI]
 * java -jar demo-enrollment.jar consume --mongo URI --rabbit URI [--consumers N] [--exit-when-idle SECONDS]
 * java -jar demo-enrollment.jar view --mongo URI
 * java -jar demo-enrollment.jar publish --mongo URI --rabbit URI [--ops N] [--shuffle] [--duplicate-rate R] [--poison N]
 * </pre>
 */
public final class Main {
    private Main() {
    }

    public static void main(String[] args) {
        System.exit(run(args));
    }

    static int run(String... args) {
        DemoOptions options;
        try {
            options = DemoOptions.parse(args);
        } catch (InvalidConfigurationException e) {
            System.err.println("error: " + e.getMessage());
            System.err.println("usage: java -jar demo-enrollment.jar [run|consume|view|publish] [options]; see README.md");
            return 2;
        }
        try (Wiring wiring = new Wiring(options)) {
            return switch (options.command()) {
                case "consume" -> ProcessCommands.consume(wiring, System.out);
                case "view" -> ProcessCommands.view(wiring, System.out);
                case "publish" -> ProcessCommands.publish(wiring, System.out);
                default -> new DemoRun(wiring, System.out).run();
            };
        } catch (InvalidConfigurationException e) {
            System.err.println("error: " + e.getMessage());
            return 2;
        } catch (dev.orderless.publish.PublishFailedException e) {
            // one line, no stack: "broker is blocking publishers: low on disk; ..." says what to check
            System.err.println("error: " + e.getMessage());
            return 1;
        } catch (Exception e) {
            System.err.println("error: " + e);
            e.printStackTrace();
            return 1;
        }
    }
}
