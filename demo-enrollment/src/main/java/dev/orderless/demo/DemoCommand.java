package dev.orderless.demo;

import java.util.concurrent.Callable;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParentCommand;

/** What every demo command has: its parent (the environment and the output streams) and {@code --help}. */
abstract class DemoCommand implements Callable<Integer> {
    @ParentCommand
    Cli cli;

    @Option(names = {"-h", "--help"}, usageHelp = true, order = 200, description = "Show this help and exit.")
    boolean help;
}
