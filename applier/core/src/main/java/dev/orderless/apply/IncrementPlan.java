package dev.orderless.apply;

import static dev.orderless.apply.WritePlan.Step.done;
import static dev.orderless.apply.WritePlan.Step.next;

import dev.orderless.apply.internal.CounterBook;

import java.math.BigInteger;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import org.bson.BsonDocument;

/**
 * increment(): a counter ({@link CounterBook} says how its increments are kept). Counts its delta at most once,
 * iff {@code seq > _floor}, no increment of the counter has this seq (pending or in a run), and compaction folded
 * none at or above it ({@code seq > _incFloor.<field>}); the value is the exact sum ({@link CounterValues}).
 *
 * <ol>
 *   <li>Blind first write: {@code $inc} the value by the delta and {@code $push} {@code {seq, d, at}} to
 *       {@code _inc.<field>}, guarded as above and on what {@code $inc} can do exactly (room among the pending
 *       increments, a value that is a long and stays one), with upsert. The value and its record change together
 *       or not at all, so no delta is ever counted twice or half.
 *   <li>If it matched nothing: read and judge. At or below the floor: superseded (a seq collision at it, which a
 *       delete holds); a pending increment with this seq: a duplicate if its delta is the same, else a seq
 *       collision; a run holding it: a duplicate (a run of one seq knows its delta, and tells a collision too); at
 *       or below the folded horizon: beyond the horizon (already counted, or late past the grace: it cannot be
 *       told which).
 *   <li>Otherwise, where the blind write would now match (a lost first-insert race), write it again; where it
 *       cannot (no room, or a sum past a long, or a value held as a {@code Decimal128}), rewrite the counter under a
 *       compare-and-set on {@code _v}: its exact value with this delta, and every increment it keeps, this one
 *       included, coalesced into runs. A lost compare-and-set means another write changed the document: read
 *       again.
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
        CounterBook book = CounterBook.of(doc, op.field());
        Optional<CounterBook.Span> held = book.holding(seq);
        if (held.isPresent()) {
            CounterBook.Span span = held.get();
            boolean sameDelta = span.sum().equals(BigInteger.valueOf(op.delta()));
            return done(span.lo() < span.hi() || sameDelta ? Outcome.DUPLICATE : Outcome.SEQ_COLLISION);
        }
        if (seq <= Stored.incrementFloor(doc, op.field())) {
            return done(Outcome.BEYOND_HORIZON);
        }
        if (!book.pendingFull() && CounterValues.incrementable(doc.get(op.field()), op.delta())) {
            return next(write());
        }
        return next(rewrite(doc, book));
    }

    private Write write() {
        return new Write("increment", Queries.incrementFilter(op.entity(), op.seq(), op.field(), op.delta()),
                Queries.incrementUpdate(op.seq(), op.field(), op.delta(), now.toEpochMilli()), true);
    }

    /** The counter rewritten from {@code doc}: its exact value with this delta, its increments coalesced. */
    private Write rewrite(BsonDocument doc, CounterBook book) {
        BigInteger value = CounterValues.read(doc.get(op.field())).orElse(BigInteger.ZERO)
                .add(BigInteger.valueOf(op.delta()));
        List<CounterBook.Span> spans = new java.util.ArrayList<>(book.all());
        spans.add(new CounterBook.Span(op.seq(), op.seq(), BigInteger.valueOf(op.delta()), now.toEpochMilli()));
        return new Write("coalesce", Queries.versionIs(op.entity(), Stored.version(doc)),
                Queries.counterRewrite(op.field(), CounterValues.stored(value), CounterBook.coalesced(spans)), false);
    }
}
