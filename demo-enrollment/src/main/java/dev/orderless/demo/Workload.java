package dev.orderless.demo;

import picocli.CommandLine.Option;

/** What the simulated web application does, for {@code run} and {@code publish}. */
final class Workload {
    @Option(names = "--ops", paramLabel = "N", order = 1, defaultValue = "5000",
            description = "Student actions to stamp and publish (default: ${DEFAULT-VALUE}).")
    int ops;

    @Option(names = "--students", paramLabel = "N", order = 2, defaultValue = "200",
            description = "Students acting (default: ${DEFAULT-VALUE}).")
    int students;

    @Option(names = "--classes", paramLabel = "N", order = 3, defaultValue = "20",
            description = "Classes to enroll in (default: ${DEFAULT-VALUE}).")
    int classes;

    @Option(names = "--seed", paramLabel = "N", order = 4, defaultValue = "1",
            description = "Random seed of the actions, duplicates and shuffle (default: ${DEFAULT-VALUE}).")
    long seed;

    @Option(names = "--shuffle", order = 5, description = "Publish the messages in a random order.")
    boolean shuffle;

    @Option(names = "--duplicate-rate", paramLabel = "R", order = 6, defaultValue = "0",
            description = "Chance, 0 to 1, that a message is published twice (default: ${DEFAULT-VALUE}).")
    double duplicateRate;

    @Option(names = "--poison", paramLabel = "N", order = 7, defaultValue = "0",
            description = "Bad messages to mix in, N in all, each of which must be dead-lettered (default: ${DEFAULT-VALUE}).")
    int poison;

    @Option(names = "--outbox", order = 8, description = {"Record the actions in the outbox (MongoDB only, no broker",
        "needed); a relay publishes them."})
    boolean outbox;

    DemoOptions applyTo(DemoOptions options) {
        return options.withWorkload(students, classes, ops, seed, shuffle, duplicateRate, poison).withOutbox(outbox);
    }
}
