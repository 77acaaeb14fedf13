package dev.orderless.backends;

import de.bwaldvogel.mongo.bson.Document;
import de.bwaldvogel.mongo.wire.bson.BsonEncoder;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import java.util.AbstractMap;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;
import org.bson.BsonDocument;
import org.bson.RawBsonDocument;

/**
 * The armed {@link Pause}s of one embedded server, and the hook its command path calls before the server runs
 * a command and after. Free when nothing is armed (one read of an empty list per command).
 *
 * <p>A command is held on the server thread (a netty event loop) that serves its connection, and that thread
 * serves other connections too once the server has more connections than threads: holding it would hold them
 * as well, and a test waiting for one of them would wait for ever. So a command whose thread serves another
 * open connection is not held; its pause says why ({@link Pause#awaitHeld}).
 */
final class Pauses {
    private final List<Pause> armed = new CopyOnWriteArrayList<>();
    private final Set<Channel> channels = ConcurrentHashMap.newKeySet();

    Pause arm(PausePoint point) {
        Pause[] pause = new Pause[1];
        pause[0] = new Pause(point, () -> armed.remove(pause[0]));
        armed.add(pause[0]);
        return pause[0];
    }

    /** Before the server runs {@code command}: holds it if a {@link PausePoint.When#BEFORE} point matches. */
    void before(Channel channel, String command, Document query) {
        channels.add(channel);
        for (Matched matched : matching(PausePoint.When.BEFORE, channel, command, query)) {
            matched.pause().hold(matched.command());
        }
    }

    /**
     * After the server ran {@code command}, before its reply is sent: holds it if an {@link PausePoint.When#AFTER}
     * point matches, and arranges a {@link PausePoint.When#WHILE_REPLYING} hold inside the reply. Returns the
     * reply to send.
     */
    Document after(Channel channel, String command, Document query, Document response) {
        for (Matched matched : matching(PausePoint.When.AFTER, channel, command, query)) {
            matched.pause().hold(matched.command());
        }
        for (Matched matched : matching(PausePoint.When.WHILE_REPLYING, channel, command, query)) {
            if (!holdWhileReplying(response, matched)) {
                matched.pause().refuse(matched.command(), "its reply holds no result with the field '"
                        + matched.pause().point().afterField() + "'");
            }
        }
        return response;
    }

    /**
     * After the server ran {@code command} and it failed (its error not yet sent): holds it if an
     * {@link PausePoint.When#AFTER} point matches; a {@link PausePoint.When#WHILE_REPLYING} point is refused, since
     * an error has no result to hold the reply in.
     */
    void failed(Channel channel, String command, Document query, RuntimeException error) {
        for (Matched matched : matching(PausePoint.When.AFTER, channel, command, query)) {
            matched.pause().hold(matched.command());
        }
        for (Matched matched : matching(PausePoint.When.WHILE_REPLYING, channel, command, query)) {
            matched.pause().refuse(matched.command(), "it failed (" + error.getMessage() + "), so its reply holds no"
                    + " result");
        }
    }

    void closed(Channel channel) {
        channels.remove(channel);
    }

    private record Matched(Pause pause, BsonDocument command) {
    }

    /** The armed pauses at {@code when} that {@code command} claims; each is disarmed, or refused if it cannot hold. */
    private List<Matched> matching(PausePoint.When when, Channel channel, String command, Document query) {
        if (armed.isEmpty()) {
            return List.of();
        }
        String name = command.toLowerCase(Locale.ROOT);
        String collection = collectionOf(command, query);
        List<Matched> matched = new ArrayList<>();
        BsonDocument document = null;
        for (Pause pause : armed) {
            PausePoint point = pause.point();
            if (point.when() != when || !point.command().equals(name) || !point.collection().equals(collection)) {
                continue;
            }
            if (document == null) {
                document = bson(query);
            }
            if (!pause.accepts(document) || !pause.claim()) {
                continue;
            }
            armed.remove(pause);
            long sharing = channels.stream()
                    .filter(other -> other != channel && other.isActive() && other.eventLoop() == channel.eventLoop())
                    .count();
            if (sharing > 0) {
                pause.refuse(document, "its server thread also serves " + sharing + " other open connection(s)"
                        + ", which holding it would hold too; pause on a server of the test's own"
                        + " (EmbeddedMongo.start()) with fewer than " + EmbeddedMongo.SERVER_THREADS + " connections");
                continue;
            }
            matched.add(new Matched(pause, document));
        }
        return matched;
    }

    /**
     * Replaces the first result in {@code response} that has the point's field with a view that holds the reply
     * once the encoder has read that field. Results are a cursor's {@code firstBatch} or {@code nextBatch}, or a
     * findAndModify's {@code value}.
     */
    private static boolean holdWhileReplying(Document response, Matched matched) {
        String field = matched.pause().point().afterField();
        if (response.get("value") instanceof Document value && value.containsKey(field)) {
            response.put("value", new HoldingAfter(value, field, () -> matched.pause().hold(matched.command())));
            return true;
        }
        if (!(response.get("cursor") instanceof Document cursor)) {
            return false;
        }
        String batchName = cursor.containsKey("firstBatch") ? "firstBatch" : "nextBatch";
        if (!(cursor.get(batchName) instanceof List<?> batch)) {
            return false;
        }
        List<Object> replaced = new ArrayList<>(batch);
        for (int i = 0; i < replaced.size(); i++) {
            if (replaced.get(i) instanceof Document result && result.containsKey(field)) {
                replaced.set(i, new HoldingAfter(result, field, () -> matched.pause().hold(matched.command())));
                cursor.put(batchName, replaced);
                return true;
            }
        }
        return false;
    }

    /**
     * A result as the reply's encoder reads it (its keys in order, then each value): the result itself, held
     * once {@code field} was read. Whatever the result is (a copy, or a stored document) is what the rest of the
     * reply reads.
     */
    private static final class HoldingAfter extends AbstractMap<String, Object> {
        private final Document result;
        private final String field;
        private final Runnable hold;
        private final AtomicBoolean held = new AtomicBoolean();

        HoldingAfter(Document result, String field, Runnable hold) {
            this.result = result;
            this.field = field;
            this.hold = hold;
        }

        @Override
        public Set<String> keySet() {
            return result.keySet();
        }

        @Override
        public Object get(Object key) {
            Object value = result.get(key);
            if (field.equals(key) && held.compareAndSet(false, true)) {
                hold.run();
            }
            return value;
        }

        @Override
        public Set<Map.Entry<String, Object>> entrySet() {
            return result.entrySet();
        }
    }

    /** The collection a command names: the value of its name, or {@code collection} for a getMore. */
    private static String collectionOf(String command, Document query) {
        Object named = command.equalsIgnoreCase("getMore") ? query.get("collection") : query.get(command);
        return named instanceof String collection ? collection : "";
    }

    private static BsonDocument bson(Document query) {
        ByteBuf buffer = Unpooled.buffer();
        try {
            BsonEncoder.encodeDocument(query, buffer);
            return new RawBsonDocument(ByteBufUtil.getBytes(buffer));
        } finally {
            buffer.release();
        }
    }
}
