package dev.orderless.chaos;

import dev.orderless.backends.Backends;
import java.io.IOException;
import java.net.URI;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import org.springframework.amqp.rabbit.connection.CachingConnectionFactory;

/**
 * The three-node RabbitMQ cluster of the failover scenarios, as {@code .ci/rabbitmq-cluster.sh} runs it: its nodes'
 * AMQP URIs ({@value #URIS}, comma-separated, node 1 first) and the script that acts on them ({@value #CTL}: kill,
 * stop, start, partition and heal a node, and {@code rabbitmqctl} on one). Both settings are system properties or
 * environment variables; {@code .ci/run} sets them after starting the cluster. Every command it runs is bounded
 * (150 s; the script bounds each of its own waits by 90 s).
 */
final class RabbitCluster {
    static final String URIS = "RABBITMQ_CLUSTER_URIS";
    static final String CTL = "RABBITMQ_CLUSTER_CTL";
    /** Why a run has no cluster, in one line: what to set and where CI starts it. */
    static final String MISSING = "no RabbitMQ cluster: set " + URIS + " and " + CTL + " (sudo bash .ci/rabbitmq-cluster.sh"
            + " start starts one; .ci/run does, and runs these scenarios with -Pfailover; CONTRIBUTING.md)";
    private static final Pattern NODE = Pattern.compile("ol([1-3])@");

    private final List<URI> uris;
    private final String ctl;

    private RabbitCluster(List<URI> uris, String ctl) {
        if (uris.size() != 3) {
            throw new IllegalStateException(URIS + " must name three nodes, named " + uris.size() + ": " + uris);
        }
        this.uris = List.copyOf(uris);
        this.ctl = ctl;
    }

    /** The cluster the settings name, if they do. */
    static Optional<RabbitCluster> fromSettings() {
        Optional<String> uris = Backends.setting(URIS, System.getenv());
        Optional<String> ctl = Backends.setting(CTL, System.getenv());
        if (uris.isEmpty() || ctl.isEmpty()) {
            return Optional.empty();
        }
        List<URI> parsed = new ArrayList<>();
        for (String each : uris.get().split(",")) {
            parsed.add(URI.create(each.strip()));
        }
        return Optional.of(new RabbitCluster(parsed, ctl.get()));
    }

    /** Node {@code n}'s AMQP URI (1 to 3). */
    URI uri(int n) {
        return uris.get(n - 1);
    }

    /** Every node as {@code host:port}, comma-separated, starting with node {@code first}: what Spring's {@code setAddresses} takes. */
    String addresses(int first) {
        List<URI> order = new ArrayList<>(uris);
        java.util.Collections.rotate(order, -(first - 1));
        return order.stream().map(u -> u.getHost() + ":" + u.getPort()).collect(Collectors.joining(","));
    }

    /**
     * A connection factory that knows all three nodes (connecting to {@code first} first, to the next one when it
     * does not answer), with correlated publisher confirms and returns, and a channel RPC timeout near the publisher's
     * confirm timeout so that nothing waits on a paused node for the client's 10 minutes.
     */
    CachingConnectionFactory connectionFactory(int first) {
        CachingConnectionFactory factory = new CachingConnectionFactory(uri(first));
        factory.setAddresses(addresses(first));
        factory.setPublisherConfirmType(CachingConnectionFactory.ConfirmType.CORRELATED);
        factory.setPublisherReturns(true);
        factory.setChannelCacheSize(32);
        factory.setConnectionTimeout(3000);
        factory.getRabbitConnectionFactory().setChannelRpcTimeout(15_000);
        return factory;
    }

    /** A connection factory to node {@code n} alone (the benchmark's one-node queue is declared through it). */
    CachingConnectionFactory nodeConnectionFactory(int n) {
        CachingConnectionFactory factory = new CachingConnectionFactory(uri(n));
        factory.setPublisherConfirmType(CachingConnectionFactory.ConfirmType.CORRELATED);
        factory.setPublisherReturns(true);
        factory.setChannelCacheSize(32);
        return factory;
    }

    /** The node (1 to 3) that leads quorum queue {@code queue}, as a running node's {@code rabbitmqctl} says. */
    int leaderOf(String queue) throws IOException {
        String line = queueLine(queue, "leader");
        Matcher m = NODE.matcher(line);
        if (!m.find()) {
            throw new IOException("no leader of '" + queue + "' in: " + line);
        }
        return Integer.parseInt(m.group(1));
    }

    /** The nodes (1 to 3) that hold a replica of quorum queue {@code queue}. */
    List<Integer> membersOf(String queue) throws IOException {
        String line = queueLine(queue, "members");
        List<Integer> members = new ArrayList<>();
        for (Matcher m = NODE.matcher(line); m.find(); ) {
            members.add(Integer.parseInt(m.group(1)));
        }
        return members;
    }

    /** {@code queue}'s line of {@code rabbitmqctl list_queues name <column>}, from the first node that answers. */
    private String queueLine(String queue, String column) throws IOException {
        IOException last = null;
        for (int n = 1; n <= 3; n++) {
            try {
                String out = script("ctl", String.valueOf(n), "-q", "list_queues", "name", column);
                return out.lines().filter(l -> l.startsWith(queue + "\t") || l.startsWith(queue + " ")).findFirst()
                        .orElseThrow(() -> new IOException("queue '" + queue + "' not listed by node " + "ol"
                                + " (" + column + "): " + out.strip()));
            } catch (IOException e) {
                last = e;   // that node is down or paused: ask the next
            }
        }
        throw last;
    }

    /** SIGKILL node {@code n}'s Erlang VM: no shutdown, no goodbye to its peers or clients. */
    void kill(int n) throws IOException {
        script("kill", String.valueOf(n));
    }

    /** Stops node {@code n} gracefully (its queues hand their leadership over first). */
    void stop(int n) throws IOException {
        script("stop-node", String.valueOf(n));
    }

    /** Starts node {@code n} again with its data and waits (bounded) until it runs. */
    void start(int n) throws IOException {
        script("start-node", String.valueOf(n));
    }

    /** Cuts node {@code n} off from the other two (blackhole routes between their namespaces). */
    void partition(int n) throws IOException {
        script("partition", String.valueOf(n));
    }

    /** Removes every cut. */
    void heal() throws IOException {
        script("heal");
    }

    /**
     * Stops node {@code n}'s replica of quorum queue {@code queue} (its Ra server), the node itself running on: with
     * the leader's node down as well, the queue has no quorum and elects no leader until {@link #restartReplica}.
     */
    void stopReplica(int n, String queue) throws IOException {
        ctl(n, "eval", raServer(queue, "stop_server"));
    }

    /** Starts node {@code n}'s replica of quorum queue {@code queue} again. */
    void restartReplica(int n, String queue) throws IOException {
        ctl(n, "eval", raServer(queue, "restart_server"));
    }

    private static String raServer(String queue, String verb) {
        return "{ok, Q} = rabbit_amqqueue:lookup(rabbit_misc:r(<<\"/\">>, queue, <<\"" + queue + "\">>)),"
                + " {RaName, _} = amqqueue:get_pid(Q), ra:" + verb + "(quorum_queues, {RaName, node()}).";
    }

    /** {@code rabbitmqctl} on node {@code n}. */
    String ctl(int n, String... args) throws IOException {
        String[] all = new String[args.length + 2];
        all[0] = "ctl";
        all[1] = String.valueOf(n);
        System.arraycopy(args, 0, all, 2, args.length);
        return script(all);
    }

    /** {@code rabbitmq-queues} on node {@code n}. */
    String queues(int n, String... args) throws IOException {
        String[] all = new String[args.length + 2];
        all[0] = "queues";
        all[1] = String.valueOf(n);
        System.arraycopy(args, 0, all, 2, args.length);
        return script(all);
    }

    /** Whether all three nodes run and see each other. */
    boolean whole() {
        try {
            script("whole");
            return true;
        } catch (IOException e) {
            return false;
        }
    }

    private String script(String... args) throws IOException {
        String[] command = new String[args.length + 2];
        command[0] = "bash";
        command[1] = ctl;
        System.arraycopy(args, 0, command, 2, args.length);
        Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
        try {
            // the script bounds each of its waits (90 s); this bounds the script
            if (!p.waitFor(150, java.util.concurrent.TimeUnit.SECONDS)) {
                p.destroyForcibly();
                throw new IOException(String.join(" ", command) + " did not finish in 150 s");
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

    @Override
    public String toString() {
        return "RabbitMQ cluster " + uris;
    }
}
