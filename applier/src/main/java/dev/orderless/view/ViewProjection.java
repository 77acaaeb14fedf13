package dev.orderless.view;

import dev.orderless.apply.Operation;
import java.util.List;
import org.bson.BsonDocument;

/**
 * Maps one source document, as it is now, to the view operations that make the view agree with it.
 * Every operation must carry {@code version} (the source document's {@code _v}) as its seq, so that a
 * view write from an older version of the source can never overwrite one from a newer version.
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
    List<Operation> project(BsonDocument source, long version);
}
