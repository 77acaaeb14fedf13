package dev.orderless.apply;

import static dev.orderless.apply.WritePlan.Step.done;
import static dev.orderless.apply.WritePlan.Step.next;

import java.time.Instant;
import java.util.Optional;
import org.bson.BsonDocument;

/**
 * increment(): a counter. Adds its delta at most once, iff {@code seq > _floor}, no increment of the counter has
 * this seq, and compaction folded none at or above it ({@code seq > _incFloor.<field>}).
 *
 * <ol>
 *   <li>Blind first write: {@code $inc} the value by the delta and {@code $push} {@code {seq, d, at}} to
 *       {@code _inc.<field>}, guarded as above, with upsert. The value and its record change together or not at
 *       all, so no delta is ever counted twice or half.
 *   <li>If it matched nothing: read and judge. At or below the floor: superseded (a seq collision at it, which a
 *       delete holds); an increment with this seq: a duplicate if its delta is the same, else a seq collision; at
 *       or below the folded horizon: beyond the horizon (already counted, or late past the grace: it cannot be
 *       told which); else (the upsert lost a first-insert race) write again.
 * </ol>
 */
final class IncrementPlan implements WritePlan {
    private final Operation.Increment op;
    private final Instant now;

    IncrementPlan(Operation.Increment op, Instant now) {
        this.op = op;
        this.now = now;
    }

    @Override
    public Optional<Write> first() {
        return Optional.of(write());
    }

    @Override
    public Step afterRead(Optional<BsonDocument> current) {
        if (current.isEmpty()) {
            return next(write());
        }
        BsonDocument doc = current.get();
        long seq = op.seq();
        Optional<Outcome> gone = Stored.atOrBelowFloor(doc, seq);
        if (gone.isPresent()) {
            return done(gone.get());
        }
        Optional<BsonDocument> recorded = Stored.increment(doc, op.field(), seq);
        if (recorded.isPresent()) {
            return done(Stored.deltaOf(recorded.get()) == op.delta() ? Outcome.DUPLICATE : Outcome.SEQ_COLLISION);
        }
        if (seq <= Stored.incrementFloor(doc, op.field())) {
            return done(Outcome.BEYOND_HORIZON);
        }
        return next(write());
    }

    private Write write() {
        return new Write("increment", Queries.incrementFilter(op.entity(), op.seq(), op.field()),
                Queries.incrementUpdate(op.seq(), op.field(), op.delta(), now.toEpochMilli()), true);
    }
}
