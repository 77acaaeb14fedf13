package dev.orderless.backends.rabbit;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.ServerSocket;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.HashMap;
import java.util.Map;
import java.util.stream.Stream;
import org.apache.qpid.server.SystemLauncher;

/**
 * Apache Qpid Broker-J in this JVM: one AMQP 0-9-1 port on loopback, a memory virtual host, user
 * guest/guest. Plain AMQP 0-9-1: no quorum queues and no RabbitMQ extensions, so
 * {@link #isRabbitMq()} is false.
 *
 * <p>PLAIN authentication is allowed without TLS ({@code secureOnlyMechanisms: []}), as RabbitMQ allows
 * it for guest on loopback; the RabbitMQ client offers no SCRAM. The initial configuration is written to a file in a temporary work directory and passed as a
 * {@code file:} URL: a {@code classpath:} URL fails under class loaders such as exec:java's ("unknown
 * protocol: classpath").
 */
public final class EmbeddedQpid implements RabbitBackend {
    private static final String CONFIG = """
            {
              "name": "orderless-embedded",
              "modelVersion": "9.0",
              "authenticationproviders": [ {
                "name": "plain", "type": "Plain", "secureOnlyMechanisms": [],
                "users": [ { "name": "guest", "type": "managed", "password": "guest" } ]
              } ],
              "ports": [ {
                "name": "AMQP", "port": "${qpid.amqp_port}", "bindingAddress": "127.0.0.1",
                "protocols": [ "AMQP_0_9_1" ], "authenticationProvider": "plain",
                "virtualhostaliases": [ { "name": "nameAlias", "type": "nameAlias" },
                                        { "name": "defaultAlias", "type": "defaultAlias" },
                                        { "name": "rabbitDefault", "type": "patternMatchingAlias", "pattern": "/",
                                          "virtualHostNode": "default" } ]
              } ],
              "virtualhostnodes": [ {
                "name": "default", "type": "Memory", "defaultVirtualHostNode": "true",
                "virtualHostInitialConfiguration": "{\\"type\\": \\"Memory\\"}"
              } ]
            }
            """;

    private final SystemLauncher launcher;
    private final Path workDir;
    private final int port;

    private EmbeddedQpid(SystemLauncher launcher, Path workDir, int port) {
        this.launcher = launcher;
        this.workDir = workDir;
        this.port = port;
    }

    /** On a free loopback port. */
    public static EmbeddedQpid start() {
        return start(0);
    }

    /** On {@code 127.0.0.1:port} ({@code 0}: any free port); a port in use is an {@link IllegalStateException}. */
    public static EmbeddedQpid start(int requestedPort) {
        if (requestedPort < 0 || requestedPort > 65_535) {
            throw new IllegalArgumentException("port must be between 0 and 65535, was " + requestedPort);
        }
        Path workDir = null;
        try {
            if (requestedPort != 0 && !isFree(requestedPort)) {
                throw new IllegalStateException("embedded AMQP broker cannot listen on 127.0.0.1:" + requestedPort
                        + " (the port is in use): choose another port, or 0 for any free one");
            }
            workDir = Files.createTempDirectory("orderless-qpid");
            Path config = workDir.resolve("initial-config.json");
            Files.writeString(config, CONFIG, StandardCharsets.UTF_8);
            int port = requestedPort == 0 ? freePort() : requestedPort;
            Map<String, Object> context = new HashMap<>();
            context.put("qpid.work_dir", workDir.toString());
            context.put("qpid.amqp_port", String.valueOf(port));
            Map<String, Object> attributes = new HashMap<>();
            attributes.put("type", "Memory");
            attributes.put("initialConfigurationLocation", config.toUri().toString());
            attributes.put("startupLoggedToSystemOut", false);
            attributes.put("context", context);
            SystemLauncher launcher = new SystemLauncher();
            launcher.startup(attributes);
            return new EmbeddedQpid(launcher, workDir, port);
        } catch (IllegalStateException | IllegalArgumentException e) {
            throw e;
        } catch (Exception e) {
            if (workDir != null) {
                deleteQuietly(workDir);
            }
            throw new IllegalStateException("embedded Qpid broker did not start: " + e.getMessage(), e);
        }
    }

    @Override
    public Kind kind() {
        return Kind.EMBEDDED;
    }

    @Override
    public URI uri() {
        // %2F: RabbitMQ's default virtual host '/', which this broker also answers to, so the same URI form
        // works on both (a bare trailing '/' would name the empty virtual host, which RabbitMQ does not have)
        return URI.create("amqp://guest:guest@127.0.0.1:" + port + "/%2F");
    }

    @Override
    public boolean isRabbitMq() {
        return false;
    }

    @Override
    public String description() {
        return "embedded Qpid Broker-J (AMQP 0-9-1) at 127.0.0.1:" + port;
    }

    @Override
    public void close() {
        try {
            launcher.shutdown();
        } finally {
            deleteQuietly(workDir);
        }
    }

    private static int freePort() throws IOException {
        try (ServerSocket socket = new ServerSocket(0)) {
            socket.setReuseAddress(true);
            return socket.getLocalPort();
        }
    }

    private static boolean isFree(int port) {
        try (ServerSocket socket = new ServerSocket()) {
            socket.setReuseAddress(true);
            socket.bind(new java.net.InetSocketAddress("127.0.0.1", port));
            return true;
        } catch (IOException e) {
            return false;
        }
    }

    private static void deleteQuietly(Path dir) {
        try (Stream<Path> paths = Files.walk(dir)) {
            paths.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        } catch (IOException | UncheckedIOException e) {
            // a leftover temp directory is not worth failing over
        }
    }
}
