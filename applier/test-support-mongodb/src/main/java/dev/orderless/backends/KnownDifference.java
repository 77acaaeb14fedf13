package dev.orderless.backends;

/**
 * Ways a backend is known to differ from a real MongoDB, each pinned by a test in the conformance
 * suite: on a backend that declares the difference the test asserts the deviating behaviour (so a fixed
 * server shows up as a failing test and the declaration can go), elsewhere the real behaviour.
 */
public enum KnownDifference {
    /** Updates given as an aggregation pipeline ({@code [ {$set: ...} ]}) are refused. */
    NO_PIPELINE_UPDATES,
    /** Change-stream update events carry a wrong {@code documentKey}; use {@code fullDocument._id}. */
    UPDATE_EVENT_DOCUMENT_KEY_WRONG,
    /** Change-stream update events carry no namespace. */
    UPDATE_EVENT_NAMESPACE_MISSING,
    /** A change stream has no resume token before its first event. */
    NO_RESUME_TOKEN_BEFORE_FIRST_EVENT,
    /** A change stream on a whole database delivers no events (watch a collection instead). */
    NO_DATABASE_WATCH,
    /**
     * A resume token the server never issued is accepted, and the stream starts at its oldest entry;
     * MongoDB refuses it (InvalidResumeToken / ChangeStreamHistoryLost), which is what makes a feeder
     * rebuild. The rebuild path therefore cannot be driven end to end on this backend.
     */
    FOREIGN_RESUME_TOKEN_ACCEPTED,
    /**
     * Collations are ignored: a collection created with a default collation compares strings exactly, and
     * its {@code _id} index carries no collation. The applier's start-up check cannot see one here.
     */
    NO_COLLATION,
    /**
     * No 16 MB limit on a stored document: an update that grows a document past it succeeds. (The driver
     * still refuses to send a command past the limit.) The too-large path of the applier can therefore only
     * be driven by an oversized command on this backend.
     */
    NO_DOCUMENT_SIZE_LIMIT,
    /**
     * {@code {"a.seq": {$not: {$gte: 3}}}} over an array of documents matches a document one of whose entries is
     * below 3 even when another is at or above it (MongoDB: only when none is). The guards use
     * {@code {a: {$not: {$elemMatch: {seq: {$gte: 3}}}}}}, which both read the same.
     */
    NOT_ON_ARRAY_PATH_READS_ONE_ENTRY,
    /**
     * An upsert that matches nothing inserts even where its update changes the {@code _id} the filter gave
     * ({@code $setOnInsert: {_id: other}}): it inserts the other {@code _id}. MongoDB refuses the insert
     * (ImmutableField) as that op's own error and inserts nothing, which is what would let one bulk write tell each
     * plain update's outcome (issue 41): not usable while tests run on this backend.
     */
    UPSERT_MAY_CHANGE_ITS_ID,
    /**
     * Binary data is stored only as generic binary (subtype 0) or a UUID (subtypes 3 and 4): a user-defined subtype
     * (128 and up) reads back as generic, and any other subtype (MD5, encrypted, column, sensitive, vector, function)
     * is refused by closing the connection. Values that hold one cannot be stored on this backend.
     */
    BINARY_SUBTYPES_LIMITED
}
