package dev.orderless.apply;

import static com.mongodb.client.model.Filters.and;
import static com.mongodb.client.model.Filters.elemMatch;
import static com.mongodb.client.model.Filters.eq;
import static com.mongodb.client.model.Filters.exists;
import static com.mongodb.client.model.Filters.gte;
import static com.mongodb.client.model.Filters.lt;
import static com.mongodb.client.model.Filters.lte;
import static com.mongodb.client.model.Filters.ne;
import static com.mongodb.client.model.Filters.not;
import static com.mongodb.client.model.Filters.or;
import static com.mongodb.client.model.Updates.combine;
import static com.mongodb.client.model.Updates.inc;
import static com.mongodb.client.model.Updates.pullByFilter;
import static com.mongodb.client.model.Updates.push;
import static com.mongodb.client.model.Updates.set;
import static com.mongodb.client.model.Updates.setOnInsert;
import static com.mongodb.client.model.Updates.unset;
import static dev.orderless.apply.StoredFields.ENTRY_SEQ;
import static dev.orderless.apply.StoredFields.FLOOR;
import static dev.orderless.apply.StoredFields.GC_FLOOR;
import static dev.orderless.apply.StoredFields.ID;
import static dev.orderless.apply.StoredFields.REGISTER_SEQS;
import static dev.orderless.apply.StoredFields.VERSION;

import dev.orderless.apply.internal.CounterBook;

import com.mongodb.client.model.Filters;
import java.util.List;
import org.bson.BsonDocument;
import org.bson.BsonString;
import org.bson.BsonValue;
import org.bson.conversions.Bson;

/**
 * Every filter and update the applier sends, in one place. Each guard is written so that a missing
 * field counts as 0 ({@code $not: {$gte: s}} matches a missing field) and so that an upsert copies
 * nothing but {@code _id} from the filter (no other top-level equality).
 */
final class Queries {
    private Queries() {
    }

    static Bson byId(String entity) {
        return eq(ID, entity);
    }

    /** {@code _floor < seq}, a missing floor counting as 0. */
    static Bson floorBelow(long seq) {
        return not(gte(FLOOR, seq));
    }

    /**
     * The floor (a delete's seq) reads as none of {@code seqs}, a missing floor counting as 0: where a write guarded
     * so matched, none of them collides with a delete. A read takes a double floor rounded toward zero, so each seq
     * rules out the whole {@code [seq, seq + 1)}; an array or a decimal holding one rules the document out too
     * (a read then decides). Not copied into an inserted document.
     */
    static Bson floorNoneOf(java.util.List<Long> seqs) {
        return Filters.nor(seqs.stream().map(seq -> and(gte(FLOOR, seq), lt(FLOOR, seq + 1))).toList());
    }

    /** The compare-and-set guard: the document still has the version that was read. */
    static Bson versionIs(String entity, Long version) {
        return and(byId(entity), version == null ? exists(VERSION, false) : eq(VERSION, version));
    }

    /** Some entry of array {@code array} has key {@code element}. */
    private static Bson hasEntry(String array, SetField set, String element) {
        return eq(array + "." + set.key(), element);
    }

    /** No entry of array {@code array} has key {@code element} (a missing array has none). */
    private static Bson hasNoEntry(String array, SetField set, String element) {
        return ne(array + "." + set.key(), element);
    }

    private static Bson entryOf(SetField set, String element) {
        return eq(set.key(), element);
    }

    private static Bson entryAtOrAbove(SetField set, String element, long seq) {
        return and(eq(set.key(), element), gte(ENTRY_SEQ, seq));
    }

    /**
     * Move {@code element} into array {@code to} (out of {@code from}, if there): applies when the
     * element is not in {@code to}, has no entry in {@code from} at or above seq, and either seq is above
     * the compaction floor or it has an entry in {@code from} (a lower one). Upserts.
     *
     * <p>Conditions on one key are dotted paths ({@code to.name: {$ne: x}}), which a server checks
     * without a sub-query per entry; {@code $elemMatch} is kept where two conditions must hold for the
     * same entry. The {@code $or} asks the compaction floor first, which settles it without reading the
     * array unless the document was compacted past this seq.
     */
    static Bson moveFilter(String entity, long seq, SetField set, String to, String from, String element) {
        return and(byId(entity),
                floorBelow(seq),
                holdsNoPlainValue(to),
                holdsNoPlainValue(from),
                hasNoEntry(to, set, element),
                not(elemMatch(from, entryAtOrAbove(set, element, seq))),
                or(not(gte(GC_FLOOR, seq)), hasEntry(from, set, element)));
    }

    static Bson moveUpdate(SetField set, String to, String from, String element, BsonDocument entry) {
        return combine(
                push(to, entry),
                pullByFilter(eq(from, new BsonDocument(set.key(), new BsonString(element)))),
                inc(VERSION, 1L),
                setOnInsert(FLOOR, 0L),
                setOnInsert(GC_FLOOR, 0L));
    }

    /**
     * Array {@code array} holds no plain value, and is none: a set another program stored as {@code ["CS 101"]} or
     * {@code "CS 101"} is not written to, so that the read that follows refuses it by name
     * ({@link EntityState#unreadable}) instead of a push mixing entries into it. ({@code $type} matches an array by
     * any of its elements, and a missing field by none.)
     */
    private static Bson holdsNoPlainValue(String array) {
        return new BsonDocument(array, new BsonDocument("$not", new BsonDocument("$type", PLAIN_VALUES)));
    }

    /**
     * What a counter another program wrote may hold that is no whole number: the write skips it, so that the read
     * that follows refuses it by name ({@link EntityState#unreadable}) rather than $inc failing on it or adding to
     * a double.
     */
    private static final org.bson.BsonArray NOT_WHOLE_NUMBERS = new org.bson.BsonArray(java.util.stream.Stream.of(
            "string", "double", "decimal", "bool", "date", "objectId", "object", "array", "timestamp", "binData", "null")
            .map(type -> (BsonValue) new BsonString(type)).toList());

    private static final org.bson.BsonArray PLAIN_VALUES = new org.bson.BsonArray(java.util.stream.Stream.of(
            "string", "double", "int", "long", "decimal", "bool", "date", "objectId", "timestamp", "binData")
            .map(type -> (BsonValue) new BsonString(type)).toList());

    /**
     * A read would find this add or remove superseded ({@link SetPlan#afterRead}): the floor above seq, or the floor
     * below it and an entry of the element above seq in either array; and neither array a plain value (which the
     * read refuses, and which the embedded server's {@code $elemMatch} cannot walk), asked first. Like every
     * write sent before a read, it looks at the op's own fields only: a document with another shape a read refuses
     * (see {@link EntityState#unreadable}) is refused at its next read.
     */
    static Bson setOpSuperseded(String entity, long seq, SetField set, String to, String from, String element) {
        Bson above = and(entryOf(set, element), readAbove(ENTRY_SEQ, seq));
        return and(byId(entity), holdsNoPlainValue(to), holdsNoPlainValue(from), or(readAbove(FLOOR, seq),
                and(floorBelow(seq), or(elemMatch(to, above), elemMatch(from, above)))));
    }

    /**
     * A read would find this assignment superseded ({@link AssignPlan#afterRead}): the floor above seq, or the floor
     * below it and the register assigned above seq.
     */
    static Bson assignSuperseded(String entity, long seq, String field) {
        return and(byId(entity), or(readAbove(FLOOR, seq), and(floorBelow(seq), readAbove(registerSeqPath(field), seq))));
    }

    /**
     * The number a read takes from {@code path} ({@link Stored}: a 32- or 64-bit integer or a double, rounded toward
     * zero; anything else 0) is above {@code seq}: at least {@code seq + 1}, and no array or decimal, which a server
     * compares by their elements and value but a read takes as 0. At most the largest long: no infinity, and no NaN,
     * which the embedded server ranks above every number (MongoDB below); a probe that does not match where a read
     * would find the op superseded only costs that read. (One {@code $type}: the embedded server spends more on it
     * than on anything else in a filter.)
     */
    private static Bson readAbove(String path, long seq) {
        return and(new BsonDocument(path, new BsonDocument("$not", new BsonDocument("$type", ARRAY_OR_DECIMAL))),
                gte(path, seq + 1), lte(path, Long.MAX_VALUE), ne(path, Double.NaN));
    }

    private static final org.bson.BsonArray ARRAY_OR_DECIMAL = new org.bson.BsonArray(List.of(new BsonString("array"),
            new BsonString("decimal")));

    /** {@code element} is already in array {@code to} with a lower seq: replace that entry in place. */
    static Bson refreshFilter(String entity, long seq, SetField set, String to, String element) {
        // $not $gte, not $lt: an entry without a seq (written before orderless) reads as seq 0, as the plan reads it
        return and(byId(entity),
                floorBelow(seq),
                elemMatch(to, and(entryOf(set, element), not(gte(ENTRY_SEQ, seq)))));
    }

    static Bson refreshUpdate(String to, BsonDocument entry) {
        return combine(set(to + ".$", entry), inc(VERSION, 1L));
    }

    /**
     * A refresh sent before any read, beside the move: {@code element} in array {@code to} below seq, and, since
     * nothing was read, what a read would have ruled out: no plain value in either array (as the move), no entry of
     * the element at or above seq in either array (an element with more than one entry, see {@link
     * DuplicateEntries}, reads as its highest). The entry below seq is the only positive match on an array, so the
     * positional {@code $} is its.
     */
    static Bson blindRefreshFilter(String entity, long seq, SetField set, String to, String from, String element) {
        return and(byId(entity),
                floorBelow(seq),
                holdsNoPlainValue(to),
                holdsNoPlainValue(from),
                elemMatch(to, and(entryOf(set, element), not(gte(ENTRY_SEQ, seq)))),
                not(elemMatch(to, entryAtOrAbove(set, element, seq))),
                not(elemMatch(from, entryAtOrAbove(set, element, seq))));
    }

    /**
     * {@code element} has entries in both arrays (an invariant broken from outside, see {@link DuplicateEntries}),
     * all below seq: the refresh's guard, and no entry of the other array at or above seq.
     */
    static Bson healFilter(String entity, long seq, SetField set, String to, String from, String element) {
        return and(refreshFilter(entity, seq, set, to, element), not(elemMatch(from, entryAtOrAbove(set, element, seq))));
    }

    /** The refresh in place of the target array's entry, and the other array's entries pulled: one entry again. */
    static Bson healUpdate(SetField set, String to, String from, String element, BsonDocument entry) {
        return combine(set(to + ".$", entry),
                pullByFilter(eq(from, new BsonDocument(set.key(), new BsonString(element)))),
                inc(VERSION, 1L));
    }

    /** Register {@code field} was last assigned below seq (or never). Upserts. */
    static Bson assignFilter(String entity, long seq, String field) {
        return and(byId(entity), floorBelow(seq), not(gte(registerSeqPath(field), seq)));
    }

    static Bson assignUpdate(long seq, String field, BsonValue value) {
        return combine(
                set(field, value),
                set(registerSeqPath(field), seq),
                inc(VERSION, 1L),
                setOnInsert(FLOOR, 0L),
                setOnInsert(GC_FLOOR, 0L));
    }

    /**
     * Pulls from {@code set}'s live array every entry that has a key and whose seq is not at or above
     * {@code seq} (a missing or non-numeric seq counts as below, as {@link Stored#seqAtLeast} decides):
     * the same entries {@link DeletePlan} tombstones, with no key list, so the command stays small.
     */
    static Bson pullKilled(SetField set, long seq) {
        BsonDocument condition = exists(set.key()).toBsonDocument();
        condition.putAll(not(gte(ENTRY_SEQ, seq)).toBsonDocument());
        return pullByFilter(new BsonDocument(set.field(), condition));
    }

    /**
     * Counter {@code field} can take this increment blind ({@link IncrementPlan}): no increment with this seq, pending
     * or in a run, none folded at or above it, room among the pending increments ({@link CounterBook#PENDING_MAX}),
     * and a value that MongoDB's {@code $inc} adds to exactly: absent or a 32- or 64-bit integer whose sum with the
     * delta stays a long (MongoDB refuses an {@code $inc} past one). Upserts: a {@code $ne}, {@code $not} or
     * {@code $exists: false} on a path is not copied into an inserted document.
     */
    static Bson incrementFilter(String entity, long seq, String field, long delta) {
        return and(byId(entity),
                floorBelow(seq),
                new BsonDocument(field, new BsonDocument("$not", new BsonDocument("$type", NOT_WHOLE_NUMBERS))),
                sumStaysALong(field, delta),
                ne(incrementsPath(field) + "." + ENTRY_SEQ, seq),
                not(elemMatch(incrementRunsPath(field), and(lte(ENTRY_SEQ, seq), gte(StoredFields.ENTRY_HI, seq)))),
                not(gte(incrementFloorPath(field), seq)),
                exists(incrementsPath(field) + "." + (CounterBook.PENDING_MAX - 1), false));
    }

    /** The value (missing counts as 0) plus {@code delta} stays within a long. */
    private static Bson sumStaysALong(String field, long delta) {
        if (delta > 0) {
            return not(Filters.gt(field, Long.MAX_VALUE - delta));
        }
        if (delta < 0) {
            return not(lt(field, Long.MIN_VALUE - delta));
        }
        return new BsonDocument();
    }

    /** Adds delta to the value and records the increment beside it, in one update: at most once per seq. */
    static Bson incrementUpdate(long seq, String field, long delta, long nowMillis) {
        return combine(
                inc(field, delta),
                push(incrementsPath(field), new BsonDocument(ENTRY_SEQ, new org.bson.BsonInt64(seq))
                        .append(StoredFields.ENTRY_DELTA, new org.bson.BsonInt64(delta))
                        .append(StoredFields.ENTRY_AT, new org.bson.BsonDateTime(nowMillis))),
                inc(VERSION, 1L),
                setOnInsert(FLOOR, 0L),
                setOnInsert(GC_FLOOR, 0L));
    }

    /** Counter {@code field}'s runs set to {@code runs}, or removed if there are none. */
    static Bson counterKept(String field, org.bson.BsonArray runs) {
        return runs.isEmpty() ? unset(incrementRunsPath(field)) : set(incrementRunsPath(field), runs);
    }

    /**
     * Counter {@code field} rewritten whole, under a compare-and-set: its exact value and its increments as
     * {@code runs}, none pending (see {@link CounterBook}).
     */
    static Bson counterRewrite(String field, BsonValue value, org.bson.BsonArray runs) {
        return combine(set(field, value), counterKept(field, runs), unset(incrementsPath(field)), inc(VERSION, 1L));
    }

    /**
     * A ranked assignment that is the newest of its register and outranks or equals the winner: no assignment at or
     * above its seq, and a winner (if any) whose value ranks at most this one's in the order declared now (ranks
     * are read from the values, never stored, so an order that gains a value in the middle re-ranks what is
     * stored). Upserts.
     */
    static Bson rankedWinsFilter(String entity, long seq, RankedField field, int rank) {
        return and(byId(entity),
                floorBelow(seq),
                // $elemMatch, not a dotted $not $gte: the embedded server reads the latter wrongly over an array
                not(elemMatch(rankedPath(field.field()), gte(ENTRY_SEQ, seq))),
                not(gte(registerSeqPath(field.field()), seq)),
                or(exists(field.field(), false), Filters.in(field.field(), field.order().subList(0, rank + 1))));
    }

    /**
     * The newest assignment wins and outranks every other: it is the register's only candidate left (each of the
     * others has a lower seq and a rank at most its own, so no delete could bring one back over it).
     */
    static Bson rankedWinsUpdate(long seq, String field, BsonValue value) {
        return combine(
                set(field, value),
                set(registerSeqPath(field), seq),
                set(rankedPath(field), new org.bson.BsonArray(java.util.List.of(rankedEntry(seq, value)))),
                inc(VERSION, 1L),
                setOnInsert(FLOOR, 0L),
                setOnInsert(GC_FLOOR, 0L));
    }

    static BsonDocument rankedEntry(long seq, BsonValue value) {
        return new BsonDocument(StoredFields.ENTRY_VALUE, value).append(ENTRY_SEQ, new org.bson.BsonInt64(seq));
    }

    static String rankedPath(String field) {
        return StoredFields.RANKED + "." + field;
    }

    static String incrementsPath(String field) {
        return StoredFields.INCREMENTS + "." + field;
    }

    static String incrementRunsPath(String field) {
        return StoredFields.INCREMENT_RUNS + "." + field;
    }

    static String incrementFloorPath(String field) {
        return StoredFields.INCREMENT_FLOOR + "." + field;
    }

    static String registerSeqPath(String field) {
        return REGISTER_SEQS + "." + field;
    }

    /** Documents holding an increment of {@code counter} (pending or in a run) recorded before {@code cutoffMillis}. */
    static Bson incrementsBefore(String counter, long cutoffMillis) {
        Bson old = lt(StoredFields.ENTRY_AT, new org.bson.BsonDateTime(cutoffMillis));
        return or(elemMatch(incrementsPath(counter), old), elemMatch(incrementRunsPath(counter), old));
    }

    /** Documents holding a tombstone in {@code set} written before {@code cutoffMillis}. */
    static Bson tombstonesBefore(SetField set, long cutoffMillis) {
        return elemMatch(set.tombstones(), lt(StoredFields.ENTRY_AT, new org.bson.BsonDateTime(cutoffMillis)));
    }
}
