package dev.orderless.apply;

import static dev.orderless.apply.WritePlan.Step.done;
import static dev.orderless.apply.WritePlan.Step.next;
import static com.mongodb.client.model.Updates.combine;
import static com.mongodb.client.model.Updates.inc;
import static com.mongodb.client.model.Updates.set;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;
import org.bson.BsonArray;
import org.bson.BsonDocument;
import org.bson.BsonInt64;
import org.bson.BsonValue;

/**
 * assign() to a ranked register ({@link RankedField}): the highest-ranked value assigned above the floor wins, ties
 * to the higher seq.
 *
 * <ol>
 *   <li>Blind first write, the common case (assignments arriving in order, a status moving forward): the newest
 *       assignment that outranks or equals the winner becomes the winner and the only candidate kept
 *       ({@link Queries#rankedWinsFilter}), with upsert.
 *   <li>If it matched nothing: read and judge. At or below the floor: superseded (a collision at it); an
 *       assignment with this seq: a duplicate if its value is the same, else a seq collision; one with a higher
 *       seq and a rank at least this one's: superseded (no delete can bring this one back over it).
 *   <li>Otherwise the assignment is a candidate: added to {@code _ranked.<field>} (those it outranks with a lower
 *       seq leave it), and the winner recomputed, in a compare-and-set on {@code _v}: the out-of-order case, so a
 *       read before the write costs little.
 * </ol>
 * A value written before orderless (no {@code _ranked}) is a candidate at seq 0 with its value's rank (below every
 * rank if it is none of the declared values), and goes with the first delete. Ranks are always read from the values
 * and the order declared now: appending a value to the order, or inserting one, re-ranks what is stored; an
 * assignment dropped earlier as outranked under the old order stays dropped.
 */
final class RankedAssignPlan implements WritePlan {
    private final Operation.Assign op;
    private final RankedField field;
    private final int rank;

    RankedAssignPlan(Operation.Assign op, RankedField field) {
        this.op = op;
        this.field = field;
        this.rank = field.rank(op.value().asString().getValue()).orElseThrow();
    }

    @Override
    public Optional<Write> first() {
        return Optional.of(wins());
    }

    @Override
    public Step afterRead(Optional<BsonDocument> current) {
        if (current.isEmpty()) {
            return next(wins());
        }
        BsonDocument doc = current.get();
        long seq = op.seq();
        Optional<Outcome> gone = Stored.atOrBelowFloor(doc, seq);
        if (gone.isPresent()) {
            return done(gone.get());
        }
        List<BsonDocument> candidates = candidates(doc, field);
        for (BsonDocument candidate : candidates) {
            if (Stored.seqOf(candidate) == seq) {
                return done(op.value().equals(candidate.get(StoredFields.ENTRY_VALUE)) ? Outcome.DUPLICATE
                        : Outcome.SEQ_COLLISION);
            }
        }
        if (candidates.stream().anyMatch(c -> Stored.seqOf(c) > seq && rankOf(field, c) >= rank)) {
            return done(Outcome.SUPERSEDED);
        }
        List<BsonDocument> kept = new ArrayList<>();
        for (BsonDocument candidate : candidates) {
            if (!(Stored.seqOf(candidate) < seq && rankOf(field, candidate) <= rank)) {
                kept.add(candidate);   // not outranked by this one, or newer: a delete between could bring it back
            }
        }
        kept.add(Queries.rankedEntry(seq, op.value()));
        kept.sort(Comparator.comparingLong(Stored::seqOf));
        BsonDocument winner = winner(field, kept).orElseThrow();
        return next(new Write("ranked", Queries.versionIs(op.entity(), Stored.version(doc)), combine(
                set(field.field(), winner.get(StoredFields.ENTRY_VALUE)),
                set(Queries.registerSeqPath(field.field()), new BsonInt64(Stored.seqOf(winner))),
                set(Queries.rankedPath(field.field()), new BsonArray(new ArrayList<BsonValue>(kept))),
                inc(StoredFields.VERSION, 1L)), false));
    }

    private Write wins() {
        return new Write("ranked-wins", Queries.rankedWinsFilter(op.entity(), op.seq(), field, rank),
                Queries.rankedWinsUpdate(op.seq(), field.field(), op.value()), true);
    }

    /**
     * The register's candidates in seq order: its {@code _ranked} entries, or, for a value written before orderless
     * (no {@code _ranked}), that value at its seq (0).
     */
    static List<BsonDocument> candidates(BsonDocument doc, RankedField field) {
        List<BsonDocument> candidates = new ArrayList<>();
        BsonValue all = doc.get(StoredFields.RANKED);
        if (all != null && all.isDocument() && all.asDocument().isArray(field.field())) {
            for (BsonValue value : all.asDocument().getArray(field.field())) {
                if (value.isDocument()) {
                    candidates.add(value.asDocument());
                }
            }
        }
        boolean ranked = all != null && all.isDocument() && all.asDocument().containsKey(field.field());
        if (!ranked && doc.containsKey(field.field())) {
            candidates.add(Queries.rankedEntry(Stored.registerSeq(doc, field.field()), doc.get(field.field())));
        }
        candidates.sort(Comparator.comparingLong(Stored::seqOf));
        return candidates;
    }

    /** The highest rank, ties to the higher seq. */
    static Optional<BsonDocument> winner(RankedField field, List<BsonDocument> candidates) {
        return candidates.stream().max(Comparator.<BsonDocument>comparingInt(c -> rankOf(field, c))
                .thenComparingLong(Stored::seqOf));
    }

    /**
     * A candidate's rank in the order declared now, read from its value (never stored, so an order that gains a
     * value re-ranks what is stored); -1, below all, for a value the order does not hold.
     */
    static int rankOf(RankedField field, BsonDocument candidate) {
        BsonValue value = candidate.get(StoredFields.ENTRY_VALUE);
        return value != null && value.isString() ? field.rank(value.asString().getValue()).orElse(-1) : -1;
    }
}
