package dev.orderless.view;

import com.mongodb.client.model.changestream.OperationType;
import java.util.Set;
import org.bson.BsonDocument;
import org.bson.BsonValue;

/**
 * What a term does with one change event, in this order:
 *
 * <ol>
 *   <li>Another segment's document: {@link #IGNORE} (a drop, rename or invalidate is everyone's).
 *   <li>Drop, rename or invalidate of the source, or drop of its database: {@link #STOP}.
 *   <li>A delete: {@link #DELETE}, take back what the source contributed.
 *   <li>No full document (deleted before the lookup; its delete event follows): {@link #SKIP}.
 *   <li>Otherwise {@link #PROJECT} the full document.
 * </ol>
 * Which segment owns an event: its full document's {@code _id} (the embedded server's update events carry a
 * wrong {@code documentKey}), else its key's; an event with no id at all is this segment's, so that the
 * projector says what is wrong with it. Pure.
 */
enum EventRoute {
    IGNORE, STOP, DELETE, SKIP, PROJECT;

    private static final Set<OperationType> FATAL = Set.of(OperationType.DROP, OperationType.RENAME,
            OperationType.DROP_DATABASE, OperationType.INVALIDATE);

    static EventRoute of(OperationType type, BsonDocument fullDocument, BsonDocument documentKey, Segment segment) {
        if (FATAL.contains(type)) {
            return STOP;
        }
        if (!owned(fullDocument, documentKey, segment)) {
            return IGNORE;
        }
        if (type == OperationType.DELETE) {
            return DELETE;
        }
        return fullDocument == null ? SKIP : PROJECT;
    }

    private static boolean owned(BsonDocument fullDocument, BsonDocument documentKey, Segment segment) {
        if (segment.count() == 1) {
            return true;
        }
        BsonValue id = fullDocument != null ? fullDocument.get("_id") : documentKey != null ? documentKey.get("_id") : null;
        return id == null || segment.owns(id);   // no id at all: let the projector say what is wrong
    }
}
