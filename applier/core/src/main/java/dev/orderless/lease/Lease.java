package dev.orderless.lease;

import java.util.Optional;
import org.bson.BsonDocument;

/**
 * A held lease with a fencing number. Renewed in the background while the holder calls
 * {@link #heartbeat()}; {@link #isHeld()} turns false the moment it is lost or may have expired. Work
 * done under the lease must itself be fenced (a write guarded by {@link #fence()}, or by a version the
 * next holder will raise): a paused holder can believe it still holds a lease that has passed to
 * someone else, and only the fence catches that.
 */
public interface Lease extends AutoCloseable {
    /**
     * The name of the leased resource, as given to {@link LeaseProvider#tryAcquire}.
     *
     * @return the resource; never changes
     */
    String resource();

    /**
     * Who holds this lease, as given to {@link LeaseProvider#tryAcquire}.
     *
     * @return the owner; never changes
     */
    String owner();

    /**
     * Higher than every earlier holder's; never goes back, since the lease document is never deleted.
     *
     * @return this holder's fencing number, fixed for the life of this lease
     */
    long fence();

    /**
     * The position the previous holder committed (a resume token, say), if any.
     *
     * @return the position read when the lease was acquired (not what this holder committed since); empty if
     *         none was ever committed
     */
    Optional<BsonDocument> position();

    /**
     * The worker is alive: keep renewing. Without a heartbeat for half a ttl, renewal stops and the lease
     * lapses within a ttl after that, so a paused or hung worker hands over by itself.
     */
    void heartbeat();

    /**
     * False once lost, released, or possibly expired by this node's clock.
     *
     * @return true while the lease is held as far as this node can tell; the fence, not this, guards the data
     */
    boolean isHeld();

    /**
     * Stores {@code position} in the lease document, only while this lease still holds it (owner and fence
     * both match). Also extends the lease.
     *
     * @param position what to hand to the next holder as {@link #position()}
     * @return false if the lease is lost (it is then marked lost)
     */
    boolean commit(BsonDocument position);

    /**
     * Reads the lease document: true if this holder still owns it. Marks the lease lost otherwise.
     *
     * @return true if the document still names this owner and fence and the lease was not already lost; if
     *         MongoDB cannot be read, what {@link #isHeld()} says
     */
    boolean verify();

    /** Stops renewing and gives up the lease without releasing it, as a crashed process would: it lapses. */
    void abandon();

    /** Releases: stops renewing and unsets the owner so a standby can take over at once. */
    @Override
    void close();
}
