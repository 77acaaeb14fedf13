package dev.orderless.backends;

import de.bwaldvogel.mongo.bson.Document;
import io.netty.channel.Channel;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

/**
 * MongoDB's fault-injection test commands, as a {@code mongod} started with {@code enableTestCommands=1} answers
 * them, so that one test drives a real replica set ({@code MONGODB_URI}) and this server alike:
 * {@code configureFailPoint: "failCommand"} (with {@code mode} {@code "alwaysOn"}, {@code "off"} or
 * {@code {times: n}}, and {@code data} {@code failCommands}, {@code errorCode}, {@code errorLabels},
 * {@code closeConnection}, {@code writeConcernError}, {@code appName}, {@code namespace}: the fields MongoDB's
 * "The failCommand fail point" page and the drivers' specifications use), and {@code waitForFailPoint}.
 *
 * <p>The error reply is MongoDB's: {@code {ok: 0, errmsg: "Failing command via 'failCommand' failpoint", code,
 * codeName, errorLabels}}; with {@code writeConcernError} the command runs and its reply carries that document (and
 * the labels), as a write applied and then not acknowledged by a majority during an election; with
 * {@code closeConnection} the connection closes and the command does not run.
 *
 * <p>One fail point is this server's own, with no counterpart in MongoDB (whose {@code closeConnection} never runs
 * the command): {@value #CLOSE_AFTER}, with the same {@code mode} and {@code data} ({@code failCommands},
 * {@code appName}, {@code namespace}): the command runs, and the connection closes before its reply is sent, a
 * network error after a write was applied. A real server refuses the name, so a test that needs it skips there.
 *
 * <p>Data fields this server does not implement ({@code blockConnection}, {@code blockTimeMS}, ...) are refused
 * with an error, not ignored, so a test never believes a fault was armed that is not. Thread-safe.
 */
final class FailPoints {
    /** MongoDB's fail point. */
    static final String FAIL_COMMAND = "failCommand";
    /** This server's own: run the command, then close the connection before the reply. */
    static final String CLOSE_AFTER = "closeConnectionAfterCommand";
    /** The message a real server's failCommand replies with. */
    static final String MESSAGE = "Failing command via 'failCommand' failpoint";
    private static final Set<String> DATA_FIELDS = Set.of("failCommands", "errorCode", "errorLabels",
            "closeConnection", "writeConcernError", "appName", "namespace", "failInternalCommands");
    private static final Set<String> CLOSE_AFTER_FIELDS = Set.of("failCommands", "appName", "namespace");
    private static final Set<String> NEVER_FAILED = Set.of("configurefailpoint", "waitforfailpoint");
    /**
     * The names MongoDB gives the codes a test of elections and outages uses (its error_codes.yml); any other code
     * is named {@code Location<code>}, as MongoDB names a code it has no name for.
     */
    private static final Map<Integer, String> CODE_NAMES = Map.ofEntries(
            Map.entry(1, "InternalError"), Map.entry(2, "BadValue"), Map.entry(6, "HostUnreachable"),
            Map.entry(7, "HostNotFound"), Map.entry(50, "MaxTimeMSExpired"), Map.entry(59, "CommandNotFound"),
            Map.entry(89, "NetworkTimeout"), Map.entry(91, "ShutdownInProgress"), Map.entry(112, "WriteConflict"),
            Map.entry(133, "FailedToSatisfyReadPreference"), Map.entry(189, "PrimarySteppedDown"),
            Map.entry(262, "ExceededTimeLimit"), Map.entry(280, "ChangeStreamFatalError"),
            Map.entry(286, "ChangeStreamHistoryLost"), Map.entry(9001, "SocketException"),
            Map.entry(10107, "NotWritablePrimary"), Map.entry(11600, "InterruptedAtShutdown"),
            Map.entry(11602, "InterruptedDueToReplStateChange"), Map.entry(13435, "NotPrimaryNoSecondaryOk"),
            Map.entry(13436, "NotPrimaryOrSecondary"), Map.entry(64, "WriteConcernFailed"));

    private final Map<String, Armed> armed = new ConcurrentHashMap<>();
    private final Map<String, Long> entered = new ConcurrentHashMap<>();
    private final Map<Channel, String> appNames = new ConcurrentHashMap<>();

    /** What a fail point does once armed, and how many more times. */
    private record Armed(Document data, long remaining) {
    }

    /** What happens to one command. */
    enum Action { NONE, FAIL, CLOSE_BEFORE, RUN_THEN_ADD_WRITE_CONCERN_ERROR, RUN_THEN_CLOSE }

    /** The decision for one command: what to do, and the data of the fail point that decided it. */
    record Decision(Action action, Document data) {
        static final Decision NONE = new Decision(Action.NONE, new Document());
    }

    /** The handshake names the client: {@code client.application.name}, which {@code appName} matches. */
    void handshake(Channel channel, Document query) {
        if (query.get("client") instanceof Document client && client.get("application") instanceof Document app
                && app.get("name") instanceof String name) {
            appNames.put(channel, name);
        }
    }

    void closed(Channel channel) {
        appNames.remove(channel);
    }

    /** True if {@code command} is one of the test commands this class answers. */
    static boolean answers(String command) {
        return NEVER_FAILED.contains(command.toLowerCase(Locale.ROOT));
    }

    /** Answers {@code configureFailPoint} or {@code waitForFailPoint} (on the admin database, as MongoDB wants). */
    Document answer(String databaseName, String command, Document query) {
        if (!"admin".equals(databaseName)) {
            return error(13, "Unauthorized", command + " may only be run against the admin database.");
        }
        return command.equalsIgnoreCase("configureFailPoint") ? configure(query) : waitFor(query);
    }

    /** Before the server runs {@code command}: whether an armed fail point takes it, and what it does. */
    Decision decide(Channel channel, String databaseName, String command, Document query) {
        if (armed.isEmpty() || answers(command)) {
            return Decision.NONE;
        }
        for (String name : List.of(FAIL_COMMAND, CLOSE_AFTER)) {
            Document data = take(name, channel, databaseName, command, query);
            if (data == null) {
                continue;
            }
            if (name.equals(CLOSE_AFTER)) {
                return new Decision(Action.RUN_THEN_CLOSE, data);
            }
            if (Boolean.TRUE.equals(data.get("closeConnection"))) {
                return new Decision(Action.CLOSE_BEFORE, data);
            }
            if (data.get("errorCode") instanceof Number) {
                return new Decision(Action.FAIL, data);
            }
            if (data.get("writeConcernError") instanceof Document) {
                return new Decision(Action.RUN_THEN_ADD_WRITE_CONCERN_ERROR, data);
            }
        }
        return Decision.NONE;
    }

    /** MongoDB's reply to a command that {@code failCommand} failed with {@code errorCode}. */
    static Document failure(Document data) {
        int code = ((Number) data.get("errorCode")).intValue();
        Document reply = error(code, codeName(code), MESSAGE);
        labels(data, reply);
        return reply;
    }

    /** The command's own reply, with the fail point's {@code writeConcernError} (and labels) added. */
    static Document withWriteConcernError(Document data, Document response) {
        Document error = new Document((Document) data.get("writeConcernError"));
        if (error.get("code") instanceof Number code && !error.containsKey("codeName")) {
            error.put("codeName", codeName(code.intValue()));
        }
        error.putIfAbsent("errmsg", MESSAGE);
        response.put("writeConcernError", error);
        labels(data, response);
        return response;
    }

    static String codeName(int code) {
        return CODE_NAMES.getOrDefault(code, "Location" + code);
    }

    private static void labels(Document data, Document reply) {
        if (data.get("errorLabels") instanceof List<?> labels && !labels.isEmpty()) {
            reply.put("errorLabels", new ArrayList<>(labels));
        }
    }

    /** The data of fail point {@code name} if it is armed and takes this command (counting it); else null. */
    private Document take(String name, Channel channel, String databaseName, String command, Document query) {
        Document[] taken = {null};
        armed.computeIfPresent(name, (n, point) -> {
            if (!matches(point.data(), channel, databaseName, command, query)) {
                return point;
            }
            taken[0] = point.data();
            entered.merge(name, 1L, Long::sum);
            return point.remaining() == Long.MAX_VALUE ? point
                    : point.remaining() > 1 ? new Armed(point.data(), point.remaining() - 1) : null;
        });
        if (taken[0] != null) {
            synchronized (this) {
                notifyAll();   // a waitForFailPoint may wait for this entry
            }
        }
        return taken[0];
    }

    private boolean matches(Document data, Channel channel, String databaseName, String command, Document query) {
        if (!(data.get("failCommands") instanceof List<?> commands)
                || commands.stream().noneMatch(c -> c instanceof String s && s.equalsIgnoreCase(command))) {
            return false;
        }
        if (data.get("appName") instanceof String app && !app.equals(appNames.get(channel))) {
            return false;
        }
        if (data.get("namespace") instanceof String namespace) {
            Object named = command.equalsIgnoreCase("getMore") ? query.get("collection") : query.get(command);
            return namespace.equals(databaseName + "." + named);
        }
        return true;
    }

    private Document configure(Document query) {
        if (!(query.get("configureFailPoint") instanceof String name)
                || !(name.equals(FAIL_COMMAND) || name.equals(CLOSE_AFTER))) {
            return error(2, "BadValue", "Cannot find failpoint: " + query.get("configureFailPoint")
                    + " (this embedded server has '" + FAIL_COMMAND + "' and its own '" + CLOSE_AFTER + "')");
        }
        Object mode = query.get("mode");
        long remaining;
        if ("off".equals(mode)) {
            remaining = 0;
        } else if ("alwaysOn".equals(mode)) {
            remaining = Long.MAX_VALUE;
        } else if (mode instanceof Document m && m.keySet().equals(Set.of("times")) && m.get("times") instanceof Number n
                && n.longValue() >= 0) {
            remaining = n.longValue();
        } else {
            return error(2, "BadValue", "mode must be \"alwaysOn\", \"off\" or {times: n} on this embedded server, was "
                    + mode);
        }
        Document data = query.get("data") instanceof Document d ? d : new Document();
        Set<String> allowed = name.equals(CLOSE_AFTER) ? CLOSE_AFTER_FIELDS : DATA_FIELDS;
        for (String field : data.keySet()) {
            if (!allowed.contains(field)) {
                return error(2, "BadValue", "the embedded server's '" + name + "' does not implement the data field '"
                        + field + "' (it has " + new java.util.TreeSet<>(allowed) + ")");
            }
        }
        if (remaining > 0 && !(data.get("failCommands") instanceof List<?>)) {
            return error(2, "BadValue", "data.failCommands must list the commands to fail");
        }
        long count = entered.getOrDefault(name, 0L);
        if (remaining == 0) {
            armed.remove(name);
        } else {
            armed.put(name, new Armed(data, remaining));
        }
        Document reply = new Document("count", count);
        reply.put("ok", 1.0);
        return reply;
    }

    private Document waitFor(Document query) {
        String name = String.valueOf(query.get("waitForFailPoint"));
        long times = query.get("timesEntered") instanceof Number n ? n.longValue() : 1;
        long maxMillis = query.get("maxTimeMS") instanceof Number n ? n.longValue() : 0;
        if (maxMillis <= 0) {
            return error(2, "BadValue", "waitForFailPoint needs a positive maxTimeMS on this embedded server");
        }
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(maxMillis);
        synchronized (this) {
            while (entered.getOrDefault(name, 0L) < times) {
                long left = deadline - System.nanoTime();
                if (left <= 0) {
                    return error(50, "MaxTimeMSExpired", "operation exceeded time limit");
                }
                try {
                    TimeUnit.NANOSECONDS.timedWait(this, left);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    return error(11601, "Interrupted", "interrupted while waiting for fail point " + name);
                }
            }
        }
        Document reply = new Document("ok", 1.0);
        return reply;
    }

    private static Document error(int code, String codeName, String message) {
        Document reply = new Document("ok", 0.0);
        reply.put("errmsg", message);
        reply.put("code", code);
        reply.put("codeName", codeName);
        return reply;
    }
}
