package dev.orderless.demo;

import static dev.orderless.testing.rabbit.LocalRabbitMq.ctl;

import dev.orderless.backends.rabbit.RabbitBackend;
import dev.orderless.testing.TcpProxy;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.URI;
import java.time.Duration;
import org.awaitility.Awaitility;

/**
 * RabbitMQ taken away and given back. A real RabbitMQ on this machine is stopped for real
 * ({@code rabbitmqctl stop_app}, then {@code start_app}; a JVM shutdown hook starts it again if the run dies
 * first, as a stopped broker would fail every later run); any other broker (the embedded Qpid) is put
 * behind a proxy that is cut. {@link #uri()} is what the processes under test are given.
 */
abstract class BrokerOutage implements AutoCloseable {
    private static final Duration COMMAND_TIMEOUT = Duration.ofSeconds(90);

    abstract String uri();

    abstract void stop() throws IOException;

    /** Gives the broker back and waits (bounded) until it answers. */
    abstract void start() throws IOException;

    abstract String description();

    /** Stops the broker itself where rabbitmqctl controls exactly that broker; else cuts a proxy to it. */
    static BrokerOutage of(RabbitBackend rabbit) {
        return dev.orderless.testing.rabbit.LocalRabbitMq.unusable(rabbit).isEmpty() ? new Stopped(rabbit)
                : new Cut(rabbit.uri());
    }


    static boolean answers(String host, int port) {
        try (Socket socket = new Socket()) {
            socket.connect(new InetSocketAddress(host, port), 1000);
            return true;
        } catch (IOException e) {
            return false;
        }
    }

    /** The real RabbitMQ, stopped with rabbitmqctl. */
    private static final class Stopped extends BrokerOutage {
        private final RabbitBackend rabbit;
        private final URI uri;
        private final Thread restartOnExit = new Thread(this::startApp, "restart-rabbitmq");
        private boolean stopped;

        Stopped(RabbitBackend rabbit) {
            this.rabbit = rabbit;
            this.uri = rabbit.uri();
        }

        @Override
        String uri() {
            return uri.toString();
        }

        @Override
        void stop() throws IOException {
            Runtime.getRuntime().addShutdownHook(restartOnExit);
            stopped = true;
            ctl(rabbit, "stop_app");
            Awaitility.await("RabbitMQ stopped").atMost(COMMAND_TIMEOUT).until(() -> !answers(uri.getHost(), port()));
        }

        @Override
        void start() throws IOException {
            if (!stopped) {
                return;
            }
            stopped = false;
            ctl(rabbit, "start_app");
            try {
                Runtime.getRuntime().removeShutdownHook(restartOnExit);
            } catch (IllegalStateException e) {
                // the JVM is shutting down: the hook runs anyway
            }
            Awaitility.await("RabbitMQ answers again").atMost(COMMAND_TIMEOUT).until(() -> answers(uri.getHost(), port()));
        }

        private int port() {
            return uri.getPort() > 0 ? uri.getPort() : 5672;
        }

        private void startApp() {
            try {
                ctl(rabbit, "start_app");
            } catch (IOException e) {
                System.err.println("[outage] could not start RabbitMQ again: run `rabbitmqctl start_app` (" + e.getMessage() + ")");
            }
        }

        @Override
        String description() {
            return "RabbitMQ at " + uri.getHost() + " stopped with rabbitmqctl stop_app";
        }

        @Override
        public void close() throws IOException {
            start();
        }
    }

    /** Any other broker, behind a proxy that is cut. */
    private static final class Cut extends BrokerOutage {
        private final URI uri;
        private final TcpProxy proxy;

        Cut(URI uri) {
            this.uri = uri;
            this.proxy = TcpProxy.start(uri.getHost(), uri.getPort());
        }

        @Override
        String uri() {
            return uri.getScheme() + "://" + (uri.getRawUserInfo() == null ? "" : uri.getRawUserInfo() + "@") + "127.0.0.1:"
                    + proxy.port() + (uri.getRawPath() == null ? "" : uri.getRawPath());
        }

        @Override
        void stop() {
            proxy.cut();
        }

        @Override
        void start() {
            proxy.restore();
        }

        @Override
        String description() {
            return "the broker at " + uri.getHost() + ":" + uri.getPort() + " behind a proxy that is cut";
        }

        @Override
        public void close() {
            proxy.close();
        }
    }
}
