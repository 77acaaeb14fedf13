package dev.orderless.apply;

import java.util.List;
import java.util.Optional;
import org.bson.BsonDocument;
import org.bson.conversions.Bson;

/**
 * How one operation is written: a first guarded write sent blind (no read), and, after a write that
 * matched nothing, a decision made from the document as it now is. {@link GuardedApplier} runs the loop.
 */
interface WritePlan {

    /** The write to try before reading anything; empty if the plan must read first. */
    Optional<Write> first();

    /**
     * The write to try first when the caller expects the operation's element to be stored already with a
     * lower seq (a hint, see {@link GuardedApplier#applyAll(java.util.List, java.util.function.Predicate)});
     * {@link #first()} unless the plan has a cheaper write for that case.
     */
    default Optional<Write> firstIfPresent() {
        return first();
    }

    /**
     * The writes a batch sends together, in one bulk write, before reading anything: {@link #first()} and, where
     * the plan has one, the write for the other state its document is likely in, guarded so that at most one of
     * them can match whatever runs first (a set element's move, and its in-place refresh for an element stored
     * already). Empty if the plan must read first.
     */
    default List<Write> blind() {
        return first().map(List::of).orElse(List.of());
    }

    /**
     * A filter that matches the op's document exactly where a read would find the op superseded (by a higher seq
     * of its slot, or by a delete above it), written so that it never matches a document the read would refuse;
     * a batch sends it beside {@link #blind()} to settle such an op without a read. Empty if the plan has none.
     */
    default Optional<Bson> supersededWhen() {
        return Optional.empty();
    }

    /** Given the document as read after a failed write (empty if absent): the outcome, or the next write. */
    Step afterRead(Optional<BsonDocument> current);

    /**
     * One {@code updateOne}. A duplicate {@code _id} on an upsert counts as "did not match".
     *
     * @param shape what kind of write this is ({@code move}, {@code refresh}, ...), for the reason given
     *              when the write can never match
     */
    record Write(String shape, Bson filter, Bson update, boolean upsert) {
    }

    /** What follows a read: a final outcome, or another write. */
    sealed interface Step {
        record Done(Outcome outcome) implements Step {
        }

        record Next(Write write) implements Step {
        }

        static Step done(Outcome outcome) {
            return new Done(outcome);
        }

        static Step next(Write write) {
            return new Next(write);
        }
    }
}
