package dev.orderless.backends;

import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.bson.BsonDocument;

/**
 * One command held by the embedded server at a {@link PausePoint}, armed by {@link EmbeddedMongo#pause}: the
 * first command that matches is held (later ones pass), until {@link #release()}, {@link #close()} or the
 * point's {@link PausePoint#holdAtMost()}. With two pauses a test forces an interleaving that thread timing
 * would show once in a thousand runs, for example a write that lands between a read and the write decided
 * from it:
 *
 * <pre>{@code
 * try (Pause read = mongo.pause(PausePoint.after("find", "students"))) {
 *     Future<Outcome> delete = executor.submit(() -> applier.apply(Operation.delete("s-1", 500)));
 *     read.awaitHeld(Duration.ofSeconds(10));       // the delete has read the document, and waits
 *     applier.apply(Operation.remove("s-1", 510, "clubs", "b"));   // a write lands meanwhile
 *     read.release();                                // the delete goes on from what it read
 *     assertThat(delete.get(10, SECONDS)).isEqualTo(Outcome.APPLIED);
 * }
 * }</pre>
 *
 * Thread-safe. The held command waits on the server thread that serves its connection; see
 * {@link EmbeddedMongo#pause} for what that means for the other connections.
 */
public final class Pause implements AutoCloseable {
    private final PausePoint point;
    private final Runnable disarm;
    private final AtomicBoolean claimed = new AtomicBoolean();
    private final CountDownLatch held = new CountDownLatch(1);
    private final CountDownLatch released = new CountDownLatch(1);
    private volatile BsonDocument command;
    private volatile String refusal;
    private volatile boolean timedOut;
    private volatile RuntimeException conditionFailed;

    Pause(PausePoint point, Runnable disarm) {
        this.point = point;
        this.disarm = disarm;
    }

    /** Where this pause holds a command. */
    public PausePoint point() {
        return point;
    }

    /**
     * Waits until a command is held here, and returns its document.
     *
     * @throws IllegalStateException if none was held within {@code timeout}, or if the server could not hold
     *                               the one that came (the message says why)
     */
    public BsonDocument awaitHeld(Duration timeout) {
        try {
            if (!held.await(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
                RuntimeException failed = conditionFailed;
                throw new IllegalStateException("no command was held " + point + " within " + timeout
                        + (failed == null ? ": check the command's name and collection, and that the code under test"
                        + " sends it" : ": its condition threw " + failed + " on a command it was asked about"), failed);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while waiting for a command " + point, e);
        }
        if (refusal != null) {
            throw new IllegalStateException("the command " + point + " came but was not held: " + refusal);
        }
        return command;
    }

    /** True once a command is held here (and still after it was released). */
    public boolean isHeld() {
        return held.getCount() == 0 && refusal == null;
    }

    /** The document of the command held here, once one is. */
    public Optional<BsonDocument> command() {
        return Optional.ofNullable(command);
    }

    /** True if the held command went on by itself after {@link PausePoint#holdAtMost()}, unreleased. */
    public boolean timedOut() {
        return timedOut;
    }

    /**
     * Lets the held command go on. Before one is held, the pause stays armed and the next matching command
     * passes at once (it is counted as held, not kept waiting).
     */
    public void release() {
        released.countDown();
    }

    /** Releases any held command and disarms the pause: nothing further is held. */
    @Override
    public void close() {
        disarm.run();
        release();
    }

    /** True if {@code command} satisfies the point's condition; a condition that throws does not match. */
    boolean accepts(BsonDocument command) {
        try {
            return point.condition().test(command);
        } catch (RuntimeException e) {
            conditionFailed = e;   // named by awaitHeld, if nothing is held
            return false;
        }
    }

    /** The first matching command claims the pause; later ones pass. */
    boolean claim() {
        return claimed.compareAndSet(false, true);
    }

    /** On the server thread: holds the command until released or {@link PausePoint#holdAtMost()}. */
    void hold(BsonDocument held) {
        this.command = held;
        this.held.countDown();
        try {
            if (!released.await(point.holdAtMost().toMillis(), TimeUnit.MILLISECONDS)) {
                timedOut = true;
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** On the server thread: the command came, but holding it would also have held others. */
    void refuse(BsonDocument came, String why) {
        this.command = came;
        this.refusal = why;
        this.held.countDown();
    }
}
