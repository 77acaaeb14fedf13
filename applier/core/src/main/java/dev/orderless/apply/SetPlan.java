package dev.orderless.apply;

import static dev.orderless.apply.WritePlan.Step.done;
import static dev.orderless.apply.WritePlan.Step.next;

import java.time.Instant;
import java.util.List;
import java.util.Optional;
import org.bson.BsonDateTime;
import org.bson.BsonDocument;
import org.bson.BsonInt64;
import org.bson.BsonString;

/**
 * add() and remove(): the same algorithm, mirrored. An add moves the element into the live array and
 * out of the tombstones; a remove does the opposite. Both apply iff {@code seq > _floor} and the element
 * has no entry (live or tombstone) with a seq at or above the operation's.
 *
 * <ol>
 *   <li>Blind first write, the MOVE: {@code $push} into the target array, {@code $pull} from the other,
 *       guarded as above, with upsert. Covers a new element, and one whose entry sits in the other array.
 *       A batch sends the REFRESH below beside it ({@link #blind()}): an element in the target array already
 *       (a re-add) settles without a read too. At most one of the two matches: the move needs no entry in
 *       the target array, the refresh one below seq.
 *   <li>If it matched nothing, read the document and judge:
 *     <ul>
 *       <li>{@code seq < _floor}: superseded by a delete; {@code seq == _floor}: a collision with it;
 *       <li>entry in the target array, lower seq: REFRESH it in place (positional {@code $set}; MongoDB
 *           refuses {@code $push} and {@code $pull} on one array in one update): the 1, 3, 2 case;
 *       <li>entry in the other array, lower seq: MOVE again (the upsert lost a first-insert race);
 *       <li>entry with the same seq: duplicate if it says the same, else a seq collision;
 *       <li>entry with a higher seq: superseded;
 *       <li>no entry and {@code seq <= _gcFloor}: beyond the horizon (its tombstone may have been compacted).
 *     </ul>
 * </ol>
 */
final class SetPlan implements WritePlan {
    private final String entity;
    private final long seq;
    private final SetField set;
    private final String element;
    private final String to;
    private final String from;
    private final BsonDocument entry;
    /** What a live entry with this seq must carry to be this very add; empty for a remove. */
    private final Optional<BsonDocument> attrs;

    private SetPlan(String entity, long seq, SetField set, String element, String to, String from,
                    BsonDocument entry, Optional<BsonDocument> attrs) {
        this.entity = entity;
        this.seq = seq;
        this.set = set;
        this.element = element;
        this.to = to;
        this.from = from;
        this.entry = entry;
        this.attrs = attrs;
    }

    static SetPlan add(Operation.Add add, SetField set) {
        BsonDocument entry = keyed(set, add.element(), add.seq());
        entry.putAll(add.attrs());
        return new SetPlan(add.entity(), add.seq(), set, add.element(), set.field(), set.tombstones(), entry,
                Optional.of(add.attrs()));
    }

    static SetPlan remove(Operation.Remove remove, SetField set, Instant now) {
        BsonDocument entry = keyed(set, remove.element(), remove.seq())
                .append(StoredFields.ENTRY_AT, new BsonDateTime(now.toEpochMilli()));
        return new SetPlan(remove.entity(), remove.seq(), set, remove.element(), set.tombstones(), set.field(), entry,
                Optional.empty());
    }

    private static BsonDocument keyed(SetField set, String element, long seq) {
        return new BsonDocument(set.key(), new BsonString(element)).append(StoredFields.ENTRY_SEQ, new BsonInt64(seq));
    }

    @Override
    public Optional<Write> first() {
        return Optional.of(move());
    }

    /**
     * The move and, beside it, the refresh in place, guarded on what a read would have ruled out ({@link
     * Queries#blindRefreshFilter}).
     */
    @Override
    public List<Write> blind() {
        return List.of(move(), blindRefresh());
    }

    @Override
    public Optional<org.bson.conversions.Bson> supersededWhen() {
        return Optional.of(Queries.setOpSuperseded(entity, seq, set, to, from, element));
    }

    @Override
    public Step afterRead(Optional<BsonDocument> current) {
        if (current.isEmpty()) {
            return next(move());
        }
        BsonDocument doc = current.get();
        long floor = Stored.floor(doc);
        if (seq < floor) {
            return done(Outcome.SUPERSEDED);
        }
        if (seq == floor) {
            return done(Outcome.SEQ_COLLISION);
        }
        Optional<BsonDocument> inTarget = Stored.entry(doc, to, set.key(), element);
        Optional<BsonDocument> inOther = Stored.entry(doc, from, set.key(), element);
        if (inTarget.isPresent() && inOther.isPresent()) {
            return bothArrays(inTarget.get(), Stored.seqOf(inTarget.get()), Stored.seqOf(inOther.get()));
        }
        if (inTarget.isPresent()) {
            long existing = Stored.seqOf(inTarget.get());
            if (existing < seq) {
                return next(refresh());
            }
            if (existing == seq) {
                return done(saysTheSame(inTarget.get()) ? Outcome.DUPLICATE : Outcome.SEQ_COLLISION);
            }
            return done(Outcome.SUPERSEDED);
        }
        if (inOther.isPresent()) {
            long existing = Stored.seqOf(inOther.get());
            if (existing < seq) {
                return next(move());
            }
            return done(existing == seq ? Outcome.SEQ_COLLISION : Outcome.SUPERSEDED);
        }
        return seq <= Stored.gcFloor(doc) ? done(Outcome.BEYOND_HORIZON) : next(move());
    }

    /**
     * Both arrays hold the element (an invariant broken from outside; see {@link DuplicateEntries}): it reads as
     * its highest seq, as {@link EntityState#of} reads it. Above both, the target entry is refreshed in place and
     * the other array's dropped, which mends the document; at the highest seq, the same operation only if that
     * entry is the target's alone and says the same (a live entry and a tombstone with one seq cannot both be
     * one operation's); below it, superseded.
     */
    private Step bothArrays(BsonDocument target, long targetSeq, long otherSeq) {
        long top = Math.max(targetSeq, otherSeq);
        if (seq > top) {
            return next(new Write("heal", Queries.healFilter(entity, seq, set, to, from, element),
                    Queries.healUpdate(set, to, from, element, entry), false));
        }
        if (seq < top) {
            return done(Outcome.SUPERSEDED);
        }
        return done(targetSeq == top && otherSeq < top && saysTheSame(target) ? Outcome.DUPLICATE : Outcome.SEQ_COLLISION);
    }

    /** The element is probably in the target array already (a view's element at its source's next version). */
    @Override
    public Optional<Write> firstIfPresent() {
        return Optional.of(blindRefresh());
    }

    /**
     * A refresh sent before any read ({@link Queries#blindRefreshFilter}), written like a heal (the other array's
     * entries of the element pulled), which is a refresh wherever no invariant is broken.
     */
    private Write blindRefresh() {
        return new Write("refresh", Queries.blindRefreshFilter(entity, seq, set, to, from, element),
                Queries.healUpdate(set, to, from, element, entry), false);
    }

    private Write refresh() {
        return new Write("refresh", Queries.refreshFilter(entity, seq, set, to, element), Queries.refreshUpdate(to, entry),
                false);
    }

    private boolean saysTheSame(BsonDocument stored) {
        return attrs.map(a -> Stored.attrsOf(stored, set.key()).equals(a)).orElse(true);
    }

    private Write move() {
        return new Write("move", Queries.moveFilter(entity, seq, set, to, from, element),
                Queries.moveUpdate(set, to, from, element, entry), true);
    }
}
