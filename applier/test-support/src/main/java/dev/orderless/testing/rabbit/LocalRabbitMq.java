package dev.orderless.testing.rabbit;

import dev.orderless.backends.Backends;
import dev.orderless.backends.rabbit.RabbitBackend;
import dev.orderless.backends.rabbit.RabbitBackends;
import java.io.IOException;
import java.net.URI;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Whether a test may act on the broker it was given through {@code rabbitmqctl} (stop it, raise an alarm):
 * only if that broker is a RabbitMQ on this machine and is the very node {@code rabbitmqctl} controls, its
 * AMQP listener on the URI's port. A URI that points elsewhere (a demo's embedded broker on another port,
 * while a developer's own RabbitMQ runs on 5672) must never make a test stop the developer's broker.
 *
 * <p>Which {@code rabbitmqctl}: for the RabbitMQ 4 that {@value RabbitBackends#RABBITMQ4_URI} names, the setting
 * {@value #RABBITMQ4_CTL}; for any other, the setting {@value #RABBITMQCTL}; else the one on the {@code PATH} (each
 * setting a system property or an environment variable). CI sets both, as it runs the broker tests on both.
 */
public final class LocalRabbitMq {
    private static final Pattern PORTS = Pattern.compile("\\[([0-9, ]*)]");
    /** The setting naming the {@code rabbitmqctl} to run. */
    public static final String RABBITMQCTL = "RABBITMQCTL";
    /** The setting naming the {@code rabbitmqctl} of the RabbitMQ 4 node. */
    public static final String RABBITMQ4_CTL = "RABBITMQ4_CTL";

    private LocalRabbitMq() {
    }

    /** Why {@code rabbitmqctl} must not be used on {@code rabbit}, or empty if it may. */
    public static Optional<String> unusable(RabbitBackend rabbit) {
        if (rabbit.kind() != RabbitBackend.Kind.EXTERNAL) {
            return Optional.of("the " + rabbit.kind().name().toLowerCase(java.util.Locale.ROOT) + " broker is not"
                    + " controlled by rabbitmqctl; set RABBITMQ_URI to a local RabbitMQ");
        }
        URI uri = rabbit.uri();
        if (!"localhost".equals(uri.getHost()) && !"127.0.0.1".equals(uri.getHost())) {
            return Optional.of("RabbitMQ at " + uri.getHost() + " is not on this machine");
        }
        String listeners;
        try {
            listeners = ctl(rabbit, "eval",
                    "[P || {listener, _, amqp, _, _, P, _} <- rabbit_networking:active_listeners()].");
        } catch (IOException e) {
            return Optional.of("rabbitmqctl does not work here (" + RABBITMQCTL + " or " + RABBITMQ4_CTL + " names"
                    + " another): " + e.getMessage());
        }
        Matcher ports = PORTS.matcher(listeners);
        int port = uri.getPort() < 0 ? 5672 : uri.getPort();
        if (!ports.find() || java.util.Arrays.stream(ports.group(1).split(",")).map(String::strip)
                .noneMatch(p -> p.equals(String.valueOf(port)))) {
            return Optional.of("the RabbitMQ rabbitmqctl controls does not listen on port " + port + " (its AMQP"
                    + " listeners: " + listeners.strip() + "), where RABBITMQ_URI points");
        }
        return Optional.empty();
    }

    /** Runs the {@code rabbitmqctl} of {@code rabbit} (see the class comment) with {@code args}, bounded; its output. */
    public static String ctl(RabbitBackend rabbit, String... args) throws IOException {
        String[] command = new String[args.length + 1];
        boolean four = RabbitBackends.rabbitMq4().map(uri -> uri.equals(rabbit.uri())).orElse(false);
        command[0] = Backends.setting(four ? RABBITMQ4_CTL : RABBITMQCTL, System.getenv()).orElse("rabbitmqctl");
        System.arraycopy(args, 0, command, 1, args.length);
        return run(command);
    }

    /** Runs a command, bounded; its output, or an IOException saying why not. */
    public static String run(String... command) throws IOException {
        Process p = new ProcessBuilder(List.of(command)).redirectErrorStream(true).start();
        try {
            if (!p.waitFor(60, TimeUnit.SECONDS)) {
                p.destroyForcibly();
                throw new IOException(String.join(" ", command) + " did not finish in 60 s");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException("interrupted running " + String.join(" ", command), e);
        }
        String out = new String(p.getInputStream().readAllBytes(), java.nio.charset.StandardCharsets.UTF_8);
        if (p.exitValue() != 0) {
            throw new IOException(String.join(" ", command) + " exited with " + p.exitValue() + ": " + out.strip());
        }
        return out;
    }
}
