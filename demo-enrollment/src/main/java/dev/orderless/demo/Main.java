package dev.orderless.demo;

/**
 * The enrollment demo's entry point; {@code --help} lists the commands, {@code COMMAND --help} their
 * options. See {@link Cli}.
 */
public final class Main {
    private Main() {
    }

    public static void main(String[] args) {
        if (java.util.Arrays.asList(args).contains("--verbose")) {
            System.setProperty("orderless.demo.stack", "%ex");   // read by logback.xml, before the first log line
        }
        System.exit(Cli.execute(System.getenv(), System.out, System.err, args));
    }
}
