package dev.orderless.apply;

import static com.mongodb.client.model.Updates.combine;
import static com.mongodb.client.model.Updates.inc;
import static com.mongodb.client.model.Updates.pushEach;
import static com.mongodb.client.model.Updates.set;
import static com.mongodb.client.model.Updates.setOnInsert;
import static com.mongodb.client.model.Updates.unset;
import static dev.orderless.apply.WritePlan.Step.done;
import static dev.orderless.apply.WritePlan.Step.next;

import dev.orderless.apply.internal.CounterBook;

import java.math.BigInteger;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.bson.BsonArray;
import org.bson.BsonDateTime;
import org.bson.BsonDocument;
import org.bson.BsonInt64;
import org.bson.BsonValue;
import org.bson.conversions.Bson;

/**
 * delete(): the entity is deleted as of seq. A compare-and-set on {@code _v}, since the new document
 * depends on the whole old one.
 *
 * <ol>
 *   <li>Read the document (nothing is sent blind).
 *   <li>Absent: upsert {@code {_floor: seq}} guarded by "no {@code _v}", so a concurrent first write
 *       makes it fail with a duplicate key and the loop reads again.
 *   <li>{@code seq < _floor}: superseded; {@code seq == _floor}: duplicate; an entry, register or increment
 *       with this very seq: a seq collision (a different operation claims it); a counter that compaction folded
 *       past this seq ({@code _incFloor.<field> > seq}): beyond the horizon, since its value holds increments
 *       on both sides of the delete and which are which is no longer known. (A run of increments holding this seq
 *       is a collision too: every seq of a run was an increment.)
 *   <li>Otherwise: {@code _floor = seq}; every live element with a lower seq becomes a tombstone with this
 *       seq (so a view fed from the document sees the removal): {@code $pull} from the live array,
 *       {@code $push} to the tombstones; every register with a lower seq is cleared; every counter keeps only
 *       its increments above seq, its value their sum (cleared if none is left); entries with a higher
 *       seq stay, coalesced into runs ({@link CounterBook}). Written with filter {@code {_id, _v: <read>}}; a concurrent write changes {@code _v},
 *       and the loop reads again.
 * </ol>
 */
final class DeletePlan implements WritePlan {
    private final Operation.Delete op;
    private final CollectionSchema schema;
    private final Instant now;

    DeletePlan(Operation.Delete op, CollectionSchema schema, Instant now) {
        this.op = op;
        this.schema = schema;
        this.now = now;
    }

    @Override
    public Optional<Write> first() {
        return Optional.empty();
    }

    @Override
    public Step afterRead(Optional<BsonDocument> current) {
        long seq = op.seq();
        if (current.isEmpty()) {
            return next(new Write("delete-insert", Queries.versionIs(op.entity(), null),
                    combine(set(StoredFields.FLOOR, seq), setOnInsert(StoredFields.GC_FLOOR, 0L),
                            inc(StoredFields.VERSION, 1L)), true));
        }
        BsonDocument doc = current.get();
        long floor = Stored.floor(doc);
        if (seq <= floor) {
            return done(seq == floor ? Outcome.DUPLICATE : Outcome.SUPERSEDED);
        }
        if (claimsSeq(doc)) {
            return done(Outcome.SEQ_COLLISION);
        }
        if (schema.counters().stream().anyMatch(counter -> Stored.incrementFloor(doc, counter) > seq)) {
            return done(Outcome.BEYOND_HORIZON);
        }
        List<Bson> updates = new ArrayList<>();
        updates.add(set(StoredFields.FLOOR, seq));
        for (SetField set : schema.sets()) {
            killLowerElements(doc, set, updates);
        }
        for (String register : schema.registers()) {
            long registerSeq = Stored.registerSeq(doc, register);
            // a value without a seq was there before orderless wrote (seq 0): older than the delete too
            if ((registerSeq != 0 || doc.containsKey(register)) && registerSeq < seq) {
                updates.add(unset(register));
                updates.add(unset(Queries.registerSeqPath(register)));
            }
        }
        for (String counter : schema.counters()) {
            keepIncrementsAbove(doc, counter, updates);
        }
        for (RankedField ranked : schema.ranked()) {
            keepCandidatesAbove(doc, ranked, updates);
        }
        updates.add(inc(StoredFields.VERSION, 1L));
        return next(new Write("delete", Queries.versionIs(op.entity(), Stored.version(doc)), combine(updates), false));
    }

    /**
     * Pulls the killed entries out of the live array and pushes their tombstones: only what changes travels,
     * so a document near MongoDB's 16 MB limit can still be deleted (a {@code $set} of whole arrays, or a
     * list of the killed keys, could make the command itself too large). The {@code _v} guard makes the
     * pull exact: it runs only on the document this plan read, where the entries it pulls (a key, and a seq
     * not at or above this one) are exactly the entries judged below, by the server's own comparison.
     */
    private void killLowerElements(BsonDocument doc, SetField set, List<Bson> updates) {
        BsonArray tombstones = new BsonArray();
        for (BsonValue value : Stored.array(doc, set.field())) {
            if (!value.isDocument()) {
                continue;   // not an entry orderless wrote: left alone, and the pull's condition skips it too
            }
            BsonDocument entry = value.asDocument();
            BsonValue key = entry.get(set.key());
            if (key != null && !Stored.seqAtLeast(entry, op.seq())) {
                tombstones.add(new BsonDocument(set.key(), key)
                        .append(StoredFields.ENTRY_SEQ, new BsonInt64(op.seq()))
                        .append(StoredFields.ENTRY_AT, new BsonDateTime(now.toEpochMilli())));
            }
        }
        if (!tombstones.isEmpty()) {
            updates.add(Queries.pullKilled(set, op.seq()));
            updates.add(pushEach(set.tombstones(), tombstones.getValues()));
        }
    }

    /**
     * The counter's increments above this seq, pending and in runs (no run straddles it: it would hold this seq,
     * which {@link #claimsSeq} calls a collision), coalesced into runs, and its value as their exact sum; cleared if
     * none is left (a value without increments was folded, at or below this seq, or there before orderless wrote:
     * older either way).
     */
    private void keepIncrementsAbove(BsonDocument doc, String counter, List<Bson> updates) {
        CounterBook book = CounterBook.of(doc, counter);
        List<CounterBook.Span> all = book.all();
        List<CounterBook.Span> kept = all.stream().filter(span -> span.lo() > op.seq()).toList();
        if (kept.isEmpty()) {
            if (doc.containsKey(counter) || !book.isEmpty()) {
                updates.add(unset(counter));
                updates.add(unset(Queries.incrementsPath(counter)));
                updates.add(unset(Queries.incrementRunsPath(counter)));
            }
            return;
        }
        BigInteger sum = kept.stream().map(CounterBook.Span::sum).reduce(BigInteger.ZERO, BigInteger::add);
        if (kept.size() == all.size() && CounterValues.read(doc.get(counter)).equals(Optional.of(sum))) {
            return;   // every increment is above the delete, and the value is their sum already
        }
        updates.add(set(counter, CounterValues.stored(sum)));
        updates.add(Queries.counterKept(counter, CounterBook.coalesced(kept)));
        updates.add(unset(Queries.incrementsPath(counter)));
    }

    /**
     * The ranked register's candidates above this seq, and the winner among them; cleared if none is left.
     */
    private void keepCandidatesAbove(BsonDocument doc, RankedField ranked, List<Bson> updates) {
        List<BsonDocument> candidates = RankedAssignPlan.candidates(doc, ranked);
        List<BsonDocument> kept = candidates.stream().filter(c -> Stored.seqOf(c) > op.seq()).toList();
        if (kept.size() == candidates.size()) {
            return;   // every candidate is above the delete: the winner stays
        }
        String field = ranked.field();
        if (kept.isEmpty()) {
            updates.add(unset(field));
            updates.add(unset(Queries.registerSeqPath(field)));
            updates.add(unset(Queries.rankedPath(field)));
            return;
        }
        BsonDocument winner = RankedAssignPlan.winner(ranked, kept).orElseThrow();
        updates.add(set(field, winner.get(StoredFields.ENTRY_VALUE)));
        updates.add(set(Queries.registerSeqPath(field), new BsonInt64(Stored.seqOf(winner))));
        updates.add(set(Queries.rankedPath(field), new BsonArray(new ArrayList<BsonValue>(kept))));
    }

    private boolean claimsSeq(BsonDocument doc) {
        for (SetField set : schema.sets()) {
            for (String array : List.of(set.field(), set.tombstones())) {
                for (BsonValue value : Stored.array(doc, array)) {
                    if (value.isDocument() && Stored.seqOf(value.asDocument()) == op.seq()) {
                        return true;
                    }
                }
            }
        }
        return schema.registers().stream().anyMatch(r -> Stored.registerSeq(doc, r) == op.seq())
                || schema.counters().stream().anyMatch(c -> CounterBook.of(doc, c).holding(op.seq()).isPresent())
                || schema.ranked().stream().anyMatch(r -> RankedAssignPlan.candidates(doc, r).stream()
                        .anyMatch(c -> Stored.seqOf(c) == op.seq()));
    }
}
