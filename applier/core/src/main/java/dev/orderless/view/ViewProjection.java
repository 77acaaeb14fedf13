package dev.orderless.view;

import dev.orderless.apply.Operation;
import java.util.List;
import org.bson.BsonDocument;

/**
 * Maps one source document, as it is now, to the view operations that make the view agree with it.
 * Every operation must carry {@code version} (the source document's {@code _v}) as its seq, so that a
 * view write from an older version of the source can never overwrite one from a newer version.
 *
 * <p>Every operation must be keyed by its source document (checked on every event; a breach stops the
 * feeder with {@link dev.orderless.InvalidConfigurationException}, see {@link ProjectionContract}): an
 * {@code add} or {@code remove} is of the element whose key is the source's {@code _id}; an {@code assign}
 * is of a register of the view document whose {@code _id} is the source's; never a {@code delete}. That
 * is what lets the feeder take back exactly what a hard-deleted source contributed.
 *
 * <p>A projection may throw on a document it cannot read (a field of the wrong type, say): that event is
 * tried again, then dead-lettered (see {@link FeederOptions.PoisonPolicy}).
 *
 * <p>Project the whole document, both what it has and what it lost (its tombstones), since a change
 * event carries only the latest full document:
 * <pre>
 * (student, v) -&gt; classes:         add(class, v, "students", studentId, {name})
 *                deleted_classes: remove(class, v, "students", studentId)
 * </pre>
 */
@FunctionalInterface
public interface ViewProjection {
    /**
     * The view operations for one version of one source document. Called on the feeder's worker threads, at
     * once from several when a feeder runs more than one worker, and possibly more than once for the same
     * version (processing is at-least-once).
     *
     * @param source  the source document as it is now, {@code _id} and {@code _v} included
     * @param version the source document's {@code _v}: the seq of every operation returned
     * @return the operations that make the view agree with this document, keyed by it as above; may be empty
     */
    List<Operation> project(BsonDocument source, long version);
}
