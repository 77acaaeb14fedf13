package dev.orderless.view;

import dev.orderless.InvalidConfigurationException;
import dev.orderless.apply.Operation;
import java.util.List;

/**
 * What a {@link ViewProjection} may return, checked on every event: the first breach stops the feeder
 * with {@link InvalidConfigurationException}, since it is a fault of the code, not of one document.
 *
 * <ol>
 *   <li>Every operation carries the source document's {@code _v} as its seq: versions of one source are
 *       ordered, so an older version's write can never overwrite a newer one's.
 *   <li>Every operation is keyed by its source document: an {@code add} or {@code remove} is of the
 *       element whose key is the source's {@code _id} (in any view document), an {@code assign} is of a
 *       register of the view document whose {@code _id} is the source's. Versions of different sources
 *       are not comparable; a write keyed otherwise (an element named after something else, a register of
 *       another view document) would let one source's {@code _v} overwrite or supersede another's. It
 *       also makes the view its own ledger of what each source contributed ({@link Contributions}).
 *   <li>No {@code delete}: it would raise the floor of a view document that gathers many sources and
 *       silently supersede the others' entries. A removed source is the feeder's business: a hard delete
 *       of the source removes what it contributed.
 * </ol>
 */
final class ProjectionContract {
    private ProjectionContract() {
    }

    static void check(String resource, String source, long version, List<Operation> ops) {
        for (Operation op : ops) {
            if (op.seq() != version) {
                throw breach(resource, source, version, op, "carries seq " + op.seq()
                        + "; every view operation must carry the source _v " + version);
            }
            if (op instanceof Operation.Delete) {
                throw breach(resource, source, version, op, "is a delete; a projection may not delete view documents"
                        + " (a view document gathers many sources). Remove this source's elements instead; the feeder"
                        + " itself removes what a hard-deleted source contributed");
            }
            if (op instanceof Operation.Increment) {
                throw breach(resource, source, version, op, "is an increment; a view is fed each version of its source"
                        + " again, so an increment would count it again: assign the source's counter value to the view"
                        + " document instead (or carry it as an attribute of an add)");
            }
            if (!keyedBy(op, source)) {
                throw breach(resource, source, version, op, "is not keyed by its source: an add or remove must be of the"
                        + " element '" + source + "', an assign must be to the view document '" + source + "'");
            }
        }
    }

    static boolean keyedBy(Operation op, String source) {
        if (op instanceof Operation.Assign) {
            return op.entity().equals(source);
        }
        if (op instanceof Operation.Add add) {
            return add.element().equals(source);
        }
        if (op instanceof Operation.Remove remove) {
            return remove.element().equals(source);
        }
        return false;
    }

    private static InvalidConfigurationException breach(String resource, String source, long version, Operation op,
                                                        String rule) {
        return new InvalidConfigurationException("view projection for '" + resource + "' returned " + op
                + " for source document '" + source + "' at _v " + version + ", which " + rule);
    }
}
