package dev.orderless.history;

import static com.mongodb.client.model.Filters.and;
import static com.mongodb.client.model.Filters.eq;
import static com.mongodb.client.model.Filters.exists;
import static com.mongodb.client.model.Filters.gt;
import static com.mongodb.client.model.Filters.in;
import static com.mongodb.client.model.Filters.lte;
import static com.mongodb.client.model.Filters.ne;
import static com.mongodb.client.model.Indexes.ascending;
import static com.mongodb.client.model.Sorts.orderBy;
import static dev.orderless.history.HistoryFields.ID;
import static dev.orderless.history.HistoryFields.ID_ENTITY;
import static dev.orderless.history.HistoryFields.ID_SEQ;

import com.mongodb.MongoBulkWriteException;
import com.mongodb.MongoException;
import com.mongodb.ReadConcern;
import com.mongodb.ReadPreference;
import com.mongodb.bulk.BulkWriteError;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.model.InsertManyOptions;
import dev.orderless.InvalidConfigurationException;
import dev.orderless.TransientException;
import dev.orderless.apply.CollectionSchema;
import dev.orderless.apply.EntityState;
import dev.orderless.apply.GuardedApplier;
import dev.orderless.apply.Operation;
import dev.orderless.apply.StoredFields;
import dev.orderless.internal.MongoErrors;
import dev.orderless.oracle.ReferenceModel;
import io.micrometer.core.instrument.Counter;
import java.time.Instant;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.function.BooleanSupplier;
import org.bson.BsonDocument;
import org.bson.BsonValue;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The version history of one collection: every operation applied to it, recorded once per
 * {@code (entity, seq)} in a collection of its own (by convention {@code <collection>_history}; see
 * {@link HistoryFields} for the stored documents). Ordinary reads keep using the live collection; the history
 * answers what the live documents cannot: the state as of any seq, the audit trail, a rebuild.
 *
 * <p>Recording, before the apply ({@link RecordingApplier} does both):
 * <ol>
 *   <li>Insert the record, {@code _id: {entity, seq}}. The history is then always a superset of what was
 *       applied: a crash between the record and the apply is healed by redelivery.
 *   <li>A duplicate {@code _id} is the same operation recorded before ({@link Recorded#DUPLICATE}), or, if
 *       the stored one says something else, a seq collision ({@link Recorded#COLLISION}): the first record
 *       stays, the collision is counted and logged. A batch is one unordered insert, and one read of the
 *       records it collided with.
 * </ol>
 * Reading: the state as of seq N is {@link ReferenceModel#continueFrom} of the entity's folded state (if
 * retention folded any, or the baseline took one) with its recorded operations up to N, so it is the same
 * whatever order they arrived in, and equals the live document's state once every recorded operation was
 * applied. The change stream cannot give this (it shows arrival order and skips versions); the live document
 * cannot (a register keeps only its last value).
 *
 * <p>A collection that had data before the history was turned on: its entities' records do not start from an
 * empty document, and a state computed from them alone would be wrong. So a read answers only on the safe path:
 * the history knows its live collection ({@link #withLive}) and its start was decided ({@link #beginBaseline},
 * before the consumers that record start); then it vouches for an entity once the baseline has taken it in or is
 * complete ({@link #baselineComplete()}), and checks the entity's live document first, saying it cannot tell when it
 * shows state no record accounts for; {@link #baseline} (run once by {@link HistoryBaseline}) takes each live
 * document into the history as its entity's folded state, after which reads answer from its horizon on. Off that
 * path ({@link #of} alone, or a start never decided) the history records, but every read says it cannot tell,
 * naming the call to make, and a rebuild writes nothing: answered from the records alone, reads of a history
 * turned on over existing data were wrong.
 *
 * <p>Safe to share between threads. Every MongoDB failure leaves as a {@link TransientException} (read or
 * record again) or an {@link InvalidConfigurationException}, as for the applier.
 */
public final class History {
    private static final Logger log = LoggerFactory.getLogger(History.class);
    private static final int READ_ATTEMPTS = 3;

    private final MongoCollection<BsonDocument> records;
    private final MongoCollection<BsonDocument> reads;
    private final Optional<MongoCollection<BsonDocument>> live;
    private final CollectionSchema schema;
    private final HistoryOptions options;
    private final ReferenceModel model;
    private final String name;
    private final Map<Recorded, Counter> recorded = new EnumMap<>(Recorded.class);
    private volatile boolean indexed;
    private volatile Vouching.Stage stage = Vouching.Stage.UNDECIDED;   // as far as this process learnt: only forward

    private History(MongoCollection<BsonDocument> records, CollectionSchema schema, HistoryOptions options,
                    Optional<MongoCollection<BsonDocument>> live) {
        if (records == null || schema == null || options == null) {
            throw new InvalidConfigurationException("history: collection, schema and options are all required");
        }
        if (!records.getWriteConcern().isAcknowledged()) {
            throw new InvalidConfigurationException("history: collection " + records.getNamespace().getCollectionName()
                    + " has an unacknowledged write concern (w: 0); a record must be acknowledged before its apply:"
                    + " use w: 1 or w: majority");
        }
        this.records = records;
        this.reads = records.withReadPreference(ReadPreference.primary()).withReadConcern(ReadConcern.LOCAL);
        // the primary, as the applier reads: a document read there shows nothing whose record a later read misses
        this.live = live.map(c -> c.withReadPreference(ReadPreference.primary()).withReadConcern(ReadConcern.LOCAL));
        this.schema = schema;
        this.options = options;
        this.model = new ReferenceModel(schema);
        this.name = records.getNamespace().getCollectionName();
        for (Recorded outcome : Recorded.values()) {
            recorded.put(outcome, Counter.builder("orderless.history.recorded")
                    .description("operations given to the history, by what became of them")
                    .tag("collection", name).tag("outcome", outcome.tag()).register(options.meters()));
        }
    }

    /**
     * The history kept in {@code records} (by convention the source collection's name + {@code "_history"}): it
     * records (what a consumer needs), but answers no read until it knows its live collection ({@link #withLive})
     * and its start is decided ({@link #beginBaseline}): from its records alone it cannot see state applied without
     * recording (before the history was on, or by a consumer that does not record), so each read says it cannot
     * tell, naming the call to make, and a rebuild leaves every entity out.
     *
     * @param records the history collection; its write concern must be acknowledged (w: 1 or w: majority)
     * @param schema  the schema of the collection whose operations are recorded
     * @return the history, with {@link HistoryOptions#ofDefaults()}
     * @throws InvalidConfigurationException if an argument is null or {@code records} is written with w: 0
     */
    public static History of(MongoCollection<BsonDocument> records, CollectionSchema schema) {
        return new History(records, schema, HistoryOptions.ofDefaults(), Optional.empty());
    }

    /**
     * {@link #of(MongoCollection, CollectionSchema)} with options.
     *
     * @param records the history collection; its write concern must be acknowledged (w: 1 or w: majority)
     * @param schema  the schema of the collection whose operations are recorded
     * @param options the clock, meters and rebuild batch size
     * @return the history
     * @throws InvalidConfigurationException if an argument is null or {@code records} is written with w: 0
     */
    public static History of(MongoCollection<BsonDocument> records, CollectionSchema schema, HistoryOptions options) {
        return new History(records, schema, options, Optional.empty());
    }

    /**
     * This history, knowing the live collection it is the history of: what reads need. Once its start is decided
     * ({@link #beginBaseline}: before the consumers that record start), each read vouches for an entity only once the
     * baseline has taken it in, or is complete ({@link #baselineComplete()}: until then any entity may hold state
     * from before the history was on, overwritten since or not), and checks the entity's live document for state no
     * record accounts for (written before the history was on, or by a consumer that does not record), saying it
     * cannot tell rather than answer without it; a rebuild leaves such an entity out and says so, and
     * {@link #baseline} can take the live documents into the history. Where the history has been on since the
     * collection was empty, {@link #beginBaseline} records the baseline complete at once (the collection empty, or
     * declared so).
     *
     * @param live the collection whose operations this history records; read on the primary
     * @return a new history over the same records, schema and options; this one is unchanged
     * @throws InvalidConfigurationException if {@code live} is null
     */
    public History withLive(MongoCollection<BsonDocument> live) {
        if (live == null) {
            throw new InvalidConfigurationException("history: the live collection is required");
        }
        return new History(records, schema, options, Optional.of(live));
    }

    /**
     * Every recorded operation, entity by entity in entity order, each entity's in seq order: what was sent, to be
     * replayed elsewhere (a chaos run of a team's own traffic, say). A state retention folded, or the baseline
     * took, stands for operations that are no longer there: they are not given.
     *
     * @param each given each recorded operation, as received
     * @return how many entities began with such a state (their earlier operations are missing from what was given)
     */
    public long forEachRecorded(java.util.function.Consumer<Operation> each) {
        long[] folded = {0};
        forEachEntity(loaded -> {
            if (loaded.record().isPresent()) {
                folded[0]++;
            }
            loaded.records().stream().sorted(java.util.Comparator.comparingLong(Records::seqOf))
                    .forEach(record -> each.accept(Records.operationOf(record)));
        });
        return folded[0];
    }

    /**
     * The live collection this is the history of, if it was given ({@link #withLive}).
     *
     * @return the live collection as given, or empty for a history that reads its records alone
     */
    public Optional<MongoCollection<BsonDocument>> live() {
        return live;
    }

    /**
     * The conventional name of the history of {@code collection}.
     *
     * @param collection the name of the live collection
     * @return {@code collection + "_history"}
     */
    public static String collectionName(String collection) {
        return collection + "_history";
    }

    /**
     * The schema the history reads its records with; a {@link RecordingApplier}'s applier must have the same.
     *
     * @return the schema this history was built with
     */
    public CollectionSchema schema() {
        return schema;
    }

    /**
     * The collection the records are in.
     *
     * @return the history collection as given, with its own read preference and write concern
     */
    public MongoCollection<BsonDocument> collection() {
        return records;
    }

    /**
     * Records and applies: what a consumer does with each operation when the history is on.
     *
     * @param applier applies each operation after it is recorded; built from the same schema, and writing the live
     *                collection if this history knows it
     * @return the recording applier
     * @throws InvalidConfigurationException if {@code applier} is null or has another schema, writes another
     *                                       collection than the live one, or writes with w: majority while the
     *                                       history does not
     */
    public RecordingApplier recording(GuardedApplier applier) {
        return new RecordingApplier(this, applier);
    }

    /**
     * Records {@code op} (validate it against the schema first: bad input is not recorded).
     *
     * @param op the operation, as received
     * @return {@link Recorded#RECORDED}, or {@link Recorded#DUPLICATE} or {@link Recorded#COLLISION} if its
     *         {@code (entity, seq)} was recorded before
     * @throws TransientException if MongoDB did not acknowledge it; recording again is safe
     */
    public Recorded record(Operation op) {
        BsonDocument record = Records.of(op, options.clock().instant());
        try {
            records.insertOne(record);
            return counted(op, Recorded.RECORDED);
        } catch (MongoException e) {
            if (!MongoErrors.isDuplicateKey(e)) {
                throw MongoErrors.translate(describe(op), e);
            }
        } catch (RuntimeException e) {
            throw MongoErrors.translate(describe(op), e);
        }
        return counted(op, compareWithStored(op, readOne(op)));
    }

    /**
     * Records every op of {@code ops} with one unordered insert (and one read of those already recorded).
     *
     * @param ops the operations, validated; one with the same {@code (entity, seq)} as an earlier one in the batch
     *            is not inserted, and is judged against the record that stays (the earlier one's, or the one
     *            recorded before the batch), as it would be if it came after the batch
     * @return what became of each, in the order given
     * @throws TransientException if MongoDB did not acknowledge the insert; recording them again is safe
     */
    public List<Recorded> recordAll(List<Operation> ops) {
        Map<BsonDocument, Integer> firstOf = new HashMap<>();   // _id -> index of its first op in this batch
        int[] firstInBatch = new int[ops.size()];                // i, or the index of the earlier op with its _id
        List<BsonDocument> inserted = new ArrayList<>();
        List<Integer> insertedOps = new ArrayList<>();
        Recorded[] outcomes = new Recorded[ops.size()];
        Instant now = options.clock().instant();
        for (int i = 0; i < ops.size(); i++) {
            Operation op = ops.get(i);
            BsonDocument id = Records.id(op.entity(), op.seq());
            Integer first = firstOf.putIfAbsent(id, i);
            firstInBatch[i] = first == null ? i : first;
            if (first == null) {
                inserted.add(Records.of(op, now));
                insertedOps.add(i);
            }
        }
        List<Integer> taken = new ArrayList<>();   // op indexes whose _id was recorded before
        if (!inserted.isEmpty()) {
            String what = describe(ops.get(insertedOps.get(0))) + " and the rest of its batch";
            try {
                records.insertMany(inserted, new InsertManyOptions().ordered(false));
            } catch (MongoBulkWriteException e) {
                if (e.getWriteConcernError() != null) {
                    throw MongoErrors.translate(what, e);
                }
                for (BulkWriteError error : e.getWriteErrors()) {
                    if (!MongoErrors.isDuplicateIdKey(error)) {
                        throw MongoErrors.translate(what, e);
                    }
                    taken.add(insertedOps.get(error.getIndex()));
                }
            } catch (RuntimeException e) {
                throw MongoErrors.translate(what, e);
            }
        }
        Map<BsonValue, BsonDocument> stored = new HashMap<>();
        if (!taken.isEmpty()) {
            List<BsonValue> ids = taken.stream().map(i -> (BsonValue) Records.id(ops.get(i).entity(), ops.get(i).seq()))
                    .toList();
            try {
                reads.find(in(ID, ids)).forEach(record -> stored.put(record.get(ID), record));
            } catch (RuntimeException e) {
                throw MongoErrors.translate("read the recorded twins of " + describe(ops.get(taken.get(0))), e);
            }
            for (int i : taken) {
                Operation op = ops.get(i);
                outcomes[i] = compareWithStored(op, Optional.ofNullable(stored.get(Records.id(op.entity(), op.seq()))));
            }
        }
        for (int i = 0; i < ops.size(); i++) {
            Operation op = ops.get(i);
            int first = firstInBatch[i];
            if (first != i) {
                // a later op with an earlier one's _id is judged against the record that stays, as a redelivery
                // after the batch would be: the first op's, if it inserted it, else the one recorded before the
                // batch (judging it against the first op alone called a copy of a losing op a duplicate, and
                // applied it where the history keeps another)
                outcomes[i] = taken.contains(first)
                        ? compareWithStored(op, Optional.ofNullable(stored.get(Records.id(op.entity(), op.seq()))))
                        : Records.body(op).equals(Records.body(ops.get(first))) ? Recorded.DUPLICATE : Recorded.COLLISION;
            } else if (outcomes[i] == null) {
                outcomes[i] = Recorded.RECORDED;
            }
            counted(op, outcomes[i]);
        }
        return List.of(outcomes);
    }

    /**
     * Every recorded operation of {@code entity}, oldest first, each with the states before and after it: one state
     * per version, so memory grows with versions times the state's size; {@link #changes} reads a range.
     *
     * @param entity the entity's {@code _id}
     * @return its folded state, its versions above the horizon and the operations apart from them, and why the
     *         history cannot vouch for them, if it cannot (always where it does not know its live collection or its
     *         start was never decided)
     * @throws TransientException if MongoDB did not answer, or retention kept folding the entity while it was read;
     *                            reading again is safe
     */
    public Versions versions(String entity) {
        Optional<BsonDocument> document = liveDocument(entity);   // first: its applies were recorded before it was read
        Loaded loaded = load(entity, Long.MAX_VALUE);
        List<Version> versions = new ArrayList<>();
        EntityState state = loaded.folded();
        for (BsonDocument record : loaded.above()) {
            Operation op = Records.operationOf(record);
            EntityState before = state;
            state = model.continueFrom(before, List.of(op));
            versions.add(new Version(op, Records.atOf(record), before, state));
        }
        List<Operation> apart = new ArrayList<>();
        loaded.late().forEach(record -> apart.add(Records.operationOf(record)));
        loaded.unjudged().forEach(record -> apart.add(Records.operationOf(record)));
        Optional<String> unknowable = loaded.unreadable().or(() -> unvouched(loaded))
                .or(() -> unexplained(loaded, document));
        return new Versions(entity, loaded.horizon(), loaded.folded(), versions, apart, loaded.baseline().isPresent(),
                unknowable);
    }

    /**
     * The state of {@code entity} after every recorded operation with a seq at or below {@code seq}, with the
     * meaning of the stored document (tombstones included); an entity with none is the empty state. Unknowable
     * below a retention or baseline horizon, with operations that arrived below a retention horizon after it was
     * folded, where compaction had dropped tombstones the history cannot account for and no delete has superseded
     * them, where the history does not know its live collection ({@link #withLive}) or its start was never decided
     * ({@link #beginBaseline}), before the baseline has taken the entity in or is complete, or when the live document
     * holds state no record accounts for.
     *
     * @param entity the entity's {@code _id}
     * @param seq    the highest seq the state includes
     * @return the state, or why the history cannot tell it (never a wrong state)
     * @throws TransientException if MongoDB did not answer, or retention kept folding the entity while it was read;
     *                            reading again is safe
     */
    public Read<EntityState> asOf(String entity, long seq) {
        Optional<BsonDocument> document = liveDocument(entity);   // first: its applies were recorded before it was read
        Loaded loaded = load(entity, document.isPresent() ? Long.MAX_VALUE : seq);   // all, to explain the document
        Optional<String> unknowable = unknowable(loaded, document, seq);
        if (unknowable.isPresent()) {
            return new Read.Unknowable<>(unknowable.get());
        }
        List<Operation> upTo = new ArrayList<>();
        for (BsonDocument record : loaded.above()) {
            if (Records.seqOf(record) <= seq) {
                upTo.add(Records.operationOf(record));
            }
        }
        EntityState state = model.continueFrom(loaded.folded(), upTo);
        Optional<String> compacted = loaded.unknowableState(state);
        return compacted.isPresent() ? new Read.Unknowable<>(compacted.get()) : new Read.Known<>(state);
    }

    /**
     * The state of {@code entity} as of {@code instant}, for seqs that are times ({@link SeqTimeline}): every
     * operation stamped at or before it, wherever it was recorded.
     *
     * @param entity   the entity's {@code _id}
     * @param instant  the time the state is asked for
     * @param timeline turns {@code instant} into the highest seq stamped at or before it
     * @return {@link #asOf(String, long)} of that seq
     */
    public Read<EntityState> asOf(String entity, Instant instant, SeqTimeline timeline) {
        return asOf(entity, timeline.lastSeqAt(instant));
    }

    /**
     * The recorded operations of {@code entity} with {@code fromSeq < seq <= toSeq}, in seq order, each with the
     * states before and after it: what took the entity from {@code asOf(fromSeq)} to {@code asOf(toSeq)}. Unknowable
     * where {@code asOf(fromSeq)} is.
     *
     * @param entity  the entity's {@code _id}
     * @param fromSeq the seq the changes start after (excluded)
     * @param toSeq   the highest seq included
     * @return the versions in the range, in seq order (empty if none), or why the history cannot tell
     * @throws TransientException if MongoDB did not answer, or retention kept folding the entity while it was read;
     *                            reading again is safe
     */
    public Read<List<Version>> changes(String entity, long fromSeq, long toSeq) {
        Optional<BsonDocument> document = liveDocument(entity);
        Loaded loaded = load(entity, document.isPresent() ? Long.MAX_VALUE : toSeq);
        Optional<String> unknowable = unknowable(loaded, document, fromSeq);
        if (unknowable.isPresent()) {
            return new Read.Unknowable<>(unknowable.get());
        }
        List<Operation> before = new ArrayList<>();
        List<BsonDocument> within = new ArrayList<>();
        for (BsonDocument record : loaded.above()) {
            if (Records.seqOf(record) <= fromSeq) {
                before.add(Records.operationOf(record));
            } else if (Records.seqOf(record) <= toSeq) {
                within.add(record);
            }
        }
        EntityState state = model.continueFrom(loaded.folded(), before);
        Optional<String> compacted = loaded.unknowableState(state);   // a floor only rises: the later states too
        if (compacted.isPresent()) {
            return new Read.Unknowable<>(compacted.get());
        }
        List<Version> changes = new ArrayList<>();
        for (BsonDocument record : within) {
            Operation op = Records.operationOf(record);
            EntityState previous = state;
            state = model.continueFrom(previous, List.of(op));
            changes.add(new Version(op, Records.atOf(record), previous, state));
        }
        return new Read.Known<>(changes);
    }

    /**
     * Takes every live document into the history ({@link #withLive} is required): the state of each entity
     * that has no baseline yet, or whose live document holds state its history does not account for, becomes its
     * folded state as of the highest seq the document shows, which reads from then on answer from (and below
     * which they say they cannot tell). Guarded per entity, so it can run while consumers run, be repeated, or
     * resume one that stopped; a pass that reaches the end records the baseline complete
     * ({@link #baselineComplete()}). Run it once every consumer records. See {@link Baselining};
     * {@link HistoryBaseline} runs it once across processes, under a lease.
     *
     * @param keepGoing asked between entities; false ends the pass early (what it took stays taken)
     * @return what the pass did, and whether it reached the end
     * @throws InvalidConfigurationException if the history does not know its live collection
     */
    public BaselinePass baseline(BooleanSupplier keepGoing) {
        return new Baselining(this).pass(Optional.empty(), keepGoing, entity -> { });
    }

    /**
     * Recomputes the live documents of every recorded entity from the history, written through {@code target}
     * (guarded: it can run while consumers run, and into the live collection or a new one). See {@link Rebuilder}.
     *
     * @param target the applier the operations are written through, into the live collection or a new one
     * @return what the rebuild did; {@link Rebuild#complete()} is false if anything was not written
     * @throws TransientException if MongoDB is down; what was written stays, and rebuilding again is safe
     */
    public Rebuild rebuild(GuardedApplier target) {
        return new Rebuilder(this, target).all();
    }

    /**
     * {@link #rebuild(GuardedApplier)} of one entity.
     *
     * @param entity the entity's {@code _id}
     * @param target the applier its operations are written through
     * @return what the rebuild did
     */
    public Rebuild rebuild(String entity, GuardedApplier target) {
        return new Rebuilder(this, target).one(entity);
    }

    /**
     * One retention pass: folds the records recorded before {@code cutoff} into one state per entity and drops
     * them. See {@link Folding}; {@link RetentionSchedule} runs it under a lease.
     *
     * @param cutoff    records recorded before it are folded (as far as a late record allows)
     * @param keepGoing asked between entities; false ends the pass early (what it folded stays folded)
     * @return what the pass did, and whether it reached the end
     */
    public RetentionPass retain(Instant cutoff, BooleanSupplier keepGoing) {
        return new Folding(this).pass(cutoff, keepGoing);
    }

    // --- for the package: reading and writing records ---

    String name() {
        return name;
    }

    HistoryOptions options() {
        return options;
    }

    ReferenceModel model() {
        return model;
    }

    MongoCollection<BsonDocument> reads() {
        return reads;
    }

    /** What the history holds of one entity: its folded state and all its records, in seq order. */
    Loaded load(String entity) {
        return load(entity, Long.MAX_VALUE);
    }

    /**
     * What the history holds of one entity up to {@code upTo}: its folded state and its records with a seq at or
     * below it, in seq order. A read is not a snapshot, and a retention pass writes the folded state before it
     * drops the records it folded: so the folded state is read again after the records, and if a pass changed it
     * meanwhile (the records read may lack some it folded), the whole read is made again, up to three times.
     */
    Loaded load(String entity, long upTo) {
        ensureIndexed();
        for (int attempt = 1; attempt <= READ_ATTEMPTS; attempt++) {
            List<BsonDocument> all = new ArrayList<>();
            Optional<BsonDocument> folded;
            try {
                folded = folded(entity);
                folded.ifPresent(all::add);
                reads.find(and(eq(ID_ENTITY, entity), gt(ID_SEQ, HistoryFields.FOLDED), lte(ID_SEQ, upTo)))
                        .sort(orderBy(ascending(ID_SEQ))).forEach(all::add);
                if (Objects.equals(folded, folded(entity))) {
                    return Loaded.of(entity, all, model);
                }
            } catch (RuntimeException e) {
                throw MongoErrors.translate("read the history of '" + entity + "' in " + name, e);
            }
        }
        throw new TransientException("read the history of '" + entity + "' in " + name + ": a retention pass folded it"
                + " during " + READ_ATTEMPTS + " reads in a row; read again");
    }

    /** The folded-state record of {@code entity}, if retention wrote one. */
    Optional<BsonDocument> folded(String entity) {
        return Optional.ofNullable(reads.find(eq(ID, Records.id(entity, HistoryFields.FOLDED))).first());
    }

    /** The records of every entity, grouped by entity in entity order, each group in seq order. */
    void forEachEntity(java.util.function.Consumer<Loaded> each) {
        ensureIndexed();
        String current = null;
        List<BsonDocument> group = new ArrayList<>();
        try {
            for (BsonDocument record : reads.find(exists(ID_ENTITY)).sort(orderBy(ascending(ID_ENTITY, ID_SEQ)))) {
                String entity = Records.entityOf(record);
                if (current != null && !current.equals(entity)) {
                    each.accept(settled(current, group));
                    group = new ArrayList<>();
                }
                current = entity;
                group.add(record);
            }
        } catch (MongoException e) {
            throw MongoErrors.translate("read the history in " + name, e);
        }
        if (current != null) {
            each.accept(settled(current, group));
        }
    }

    /**
     * {@code group} as read in a scan, unless a retention pass changed the entity's folded state meanwhile
     * (then some records it folded may be missing from the group): then the entity is read again.
     */
    private Loaded settled(String entity, List<BsonDocument> group) {
        Optional<BsonDocument> scanned = group.stream().filter(Records::isFolded).findFirst();
        try {
            return Objects.equals(scanned, folded(entity)) ? Loaded.of(entity, group, model) : load(entity);
        } catch (MongoException e) {
            throw MongoErrors.translate("read the history of '" + entity + "' in " + name, e);
        }
    }

    /** The live document of {@code entity}, if the live collection is known and it has one. */
    Optional<BsonDocument> liveDocument(String entity) {
        if (live.isEmpty()) {
            return Optional.empty();
        }
        try {
            return Optional.ofNullable(live.get().find(eq(StoredFields.ID, entity)).first());
        } catch (RuntimeException e) {
            throw MongoErrors.translate("read the live document of '" + entity + "' for its history in " + name, e);
        }
    }

    /**
     * True once the baseline is complete: every entity that had operations before the history was on has been
     * taken in (or the collection was empty, or the history was declared on since its first write), so an entity
     * with no state taken by the baseline has been recorded from its first operation. Read from the history
     * collection until it is, and remembered from then on (it never goes back). See {@link HistoryBaseline}.
     *
     * @return true if the baseline is recorded complete in the history collection
     */
    public boolean baselineComplete() {
        return stage() == Vouching.Stage.COMPLETE;
    }

    /**
     * How far the history's start has come: read from the history collection until it is complete, and remembered
     * from then on (a stage never goes back).
     */
    Vouching.Stage stage() {
        if (stage != Vouching.Stage.COMPLETE) {
            learnt(BaselineStatus.read(this).map(status -> status.complete().isPresent() ? Vouching.Stage.COMPLETE
                    : Vouching.Stage.UNDER_WAY).orElse(Vouching.Stage.UNDECIDED));
        }
        return stage;
    }

    /** Remembers {@code reached}, unless this process knows of a later stage already. */
    synchronized void learnt(Vouching.Stage reached) {
        if (reached.compareTo(stage) > 0) {
            stage = reached;
        }
    }

    void learntComplete() {
        learnt(Vouching.Stage.COMPLETE);
    }

    /** True if this process already knows the baseline is complete; no round trip. */
    boolean knownComplete() {
        return stage == Vouching.Stage.COMPLETE;
    }

    /**
     * Decides how the history starts on its live collection ({@link #withLive} is required), before the consumers
     * that record start, so that none of their first documents counts as data from before the history. Decided once
     * per history: what it decides is recorded in the history collection, and a later call (in any process) finds it
     * there. A baseline that began is resumed whatever {@code start} says, except
     * {@link HistoryBaseline.Start#DECLARE_COMPLETE}, which is then refused. Then, while it is
     * {@link HistoryBaseline.Begun#UNDER_WAY}, run {@link HistoryBaseline#runIfDue()} beside the consumers until it is
     * complete.
     *
     * @param start how to decide, if nothing was decided before
     * @return {@link HistoryBaseline.Begun#COMPLETE}, {@link HistoryBaseline.Begun#UNDER_WAY}, or
     *         {@link HistoryBaseline.Begun#UNDECIDED} (nothing written) if {@code DETECT} could not tell
     * @throws InvalidConfigurationException if {@code start} is {@code DECLARE_COMPLETE} and a baseline that began
     *                                       taking the live documents in is not complete, if {@code start} is null,
     *                                       or if the history does not know its live collection
     */
    public HistoryBaseline.Begun beginBaseline(HistoryBaseline.Start start) {
        if (start == null) {
            throw new InvalidConfigurationException("history baseline of " + name + ": start is required");
        }
        if (live.isEmpty()) {
            throw new InvalidConfigurationException("history baseline of " + name + ": the history does not know its"
                    + " live collection; give it with History.withLive(collection)");
        }
        if (baselineComplete()) {
            return HistoryBaseline.Begun.COMPLETE;
        }
        boolean liveEmpty = liveIsEmpty();
        boolean historyEmpty = isEmpty();
        // last: a process that decided first recorded it before its consumers wrote anything that this one saw
        Optional<BaselineStatus.Status> status = BaselineStatus.read(this);
        Instant now = options.clock().instant();
        if (status.flatMap(BaselineStatus.Status::complete).isPresent()) {
            learntComplete();
            return HistoryBaseline.Begun.COMPLETE;
        }
        if (start == HistoryBaseline.Start.DECLARE_COMPLETE) {
            if (status.isPresent()) {
                throw new InvalidConfigurationException("history baseline of " + name + ": cannot be declared complete:"
                        + " a baseline began taking the live documents in at " + status.get().begun() + " (the history"
                        + " was turned on over existing data) and is not complete; let it run to the end");
            }
            BaselineStatus.complete(this, BaselineStatus.How.DECLARED, now);
            return HistoryBaseline.Begun.COMPLETE;
        }
        if (status.isPresent()) {
            learnt(Vouching.Stage.UNDER_WAY);
            return HistoryBaseline.Begun.UNDER_WAY;
        }
        if (liveEmpty && historyEmpty) {   // nothing to take in: from now on every entity is recorded from the start
            BaselineStatus.complete(this, BaselineStatus.How.EMPTY, now);
            return HistoryBaseline.Begun.COMPLETE;
        }
        if (start == HistoryBaseline.Start.DETECT && !historyEmpty) {
            return HistoryBaseline.Begun.UNDECIDED;
        }
        BaselineStatus.begin(this, now);
        return HistoryBaseline.Begun.UNDER_WAY;
    }

    /** True if the live collection has no document. */
    boolean liveIsEmpty() {
        try {
            return live.orElseThrow().find().projection(new BsonDocument(StoredFields.ID, new org.bson.BsonInt32(1)))
                    .limit(1).first() == null;
        } catch (RuntimeException e) {
            throw MongoErrors.translate("look for documents in the live collection of " + name, e);
        }
    }

    /** True if the history holds no record and no folded state. */
    boolean isEmpty() {
        try {
            return reads.find(ne(ID, BaselineStatus.ID_VALUE)).limit(1).first() == null;
        } catch (RuntimeException e) {
            throw MongoErrors.translate("look for records in " + name, e);
        }
    }

    /** Why the state of {@code loaded}'s entity as of {@code seq} cannot be told, if it cannot. */
    private Optional<String> unknowable(Loaded loaded, Optional<BsonDocument> document, long seq) {
        return loaded.unreadable().or(() -> unvouched(loaded)).or(() -> loaded.unknowableAt(seq))
                .or(() -> unexplained(loaded, document));
    }

    /**
     * Why no state of {@code loaded}'s entity can be vouched for, whatever its records and live document say, if so:
     * the history does not know its live collection, its start was never decided, or the baseline is under way and
     * has not taken the entity in (it may have had operations before the history was on, whose effects the live
     * document need not show any more: a rename, a remove, a delete). See {@link Vouching}.
     */
    Optional<String> unvouched(Loaded loaded) {
        return Vouching.unvouched(name, loaded.entity(), live.isPresent(), loaded.baseline().isPresent(), this::stage);
    }

    /**
     * Why the records of {@code loaded} (all of them, read after {@code document}) cannot explain the live
     * document, if they cannot: it shows a seq that no record has and the folded state does not vouch for. Every
     * operation applied with the history on was recorded before it was applied, so before the document was read;
     * one it shows and the history lacks was applied without it (before the history was on, or by a consumer that
     * does not record), and others may be hidden under later ones: no state of the entity can be vouched for.
     */
    Optional<String> unexplained(Loaded loaded, Optional<BsonDocument> document) {
        if (document.isEmpty()) {
            return Optional.empty();
        }
        java.util.Set<Long> recorded = loaded.recordedSeqs();
        long gcFloor = LiveDocument.gcFloor(document.get());
        Map<Long, String> unaccounted = new java.util.TreeMap<>();
        LiveDocument.seqs(document.get(), schema).forEach((seq, where) -> {
            if (!recorded.contains(seq) && !loaded.vouchesFor(seq, gcFloor)) {
                unaccounted.put(seq, where);
            }
        });
        for (String counter : schema.counters()) {
            LiveDocument.runs(document.get(), counter).forEach((lo, run) -> loaded.firstUnaccounted(counter, lo,
                    run.hi(), recorded).ifPresent(seq -> unaccounted.putIfAbsent(seq, "an increment of counter '"
                    + counter + "' in a run of seqs " + lo + " to " + run.hi())));
        }
        if (unaccounted.isEmpty()) {
            return uncounted(loaded, document.get());
        }
        Map.Entry<Long, String> first = unaccounted.entrySet().iterator().next();
        return Optional.of("the live document of '" + loaded.entity() + "' holds state that no record accounts for ("
                + first.getValue() + " written by seq " + first.getKey() + (unaccounted.size() > 1 ? ", and "
                + (unaccounted.size() - 1) + " more" : "") + "): it was applied before the history was on, or by a"
                + " consumer that does not record, and what it overwrote is not known either; the history's baseline"
                + " takes the live state in, after which reads from its horizon on answer");
    }

    /**
     * Why the live document counts more applied operations than the history holds records of the entity, if it
     * does: {@code _v} rises by one per applied operation, and each was recorded before it was applied, so a higher
     * {@code _v} shows an apply without recording whose effects may all have been overwritten since by recorded
     * operations (they show nowhere in the document). Only where no state is folded (retention drops the records it
     * folds) and compaction never ran on the document (it raises {@code _v} too, dropping tombstones or folding a
     * counter's increments).
     */
    private Optional<String> uncounted(Loaded loaded, BsonDocument document) {
        long applied = LiveDocument.version(document);
        long records = loaded.records().size();
        if (loaded.record().isPresent() || LiveDocument.gcFloor(document) > 0
                || !LiveDocument.incrementFloors(document).isEmpty() || applied <= records) {
            return Optional.empty();
        }
        return Optional.of("the live document of '" + loaded.entity() + "' counts " + applied + " applied operations"
                + " (_v) and the history holds " + records + " records of it: at least " + (applied - records)
                + " were applied without recording (before the history was on, or by a consumer that does not"
                + " record), and what they wrote may have been overwritten since; the history's baseline takes the"
                + " live state in, after which reads from its horizon on answer");
    }

    void ensureIndexed() {
        if (indexed) {
            return;
        }
        try {
            records.createIndex(ascending(ID_ENTITY, ID_SEQ));
            indexed = true;
        } catch (RuntimeException e) {
            throw MongoErrors.translate("create the index {_id.entity, _id.seq} of " + name, e);
        }
    }

    private Optional<BsonDocument> readOne(Operation op) {
        try {
            return Optional.ofNullable(reads.find(eq(ID, Records.id(op.entity(), op.seq()))).first());
        } catch (RuntimeException e) {
            throw MongoErrors.translate("read the recorded twin of " + describe(op), e);
        }
    }

    private Recorded compareWithStored(Operation op, Optional<BsonDocument> stored) {
        if (stored.isEmpty()) {
            // a duplicate _id whose record is gone: only retention drops records, and it folded this one
            return Recorded.DUPLICATE;
        }
        return Records.bodyOf(stored.get()).equals(Records.body(op)) ? Recorded.DUPLICATE : Recorded.COLLISION;
    }

    private Recorded counted(Operation op, Recorded outcome) {
        recorded.get(outcome).increment();
        if (outcome == Recorded.COLLISION) {
            log.warn("seq collision in {} '{}' seq {}: a different operation with this seq was recorded first and"
                    + " stays; check the stamper ({})", name, op.entity(), op.seq(), op);
        }
        return outcome;
    }

    private String describe(Operation op) {
        return "record " + name + " '" + op.entity() + "' seq " + op.seq();
    }

    static EntityState empty(String entity) {
        return new EntityState(entity, 0, Map.of(), Map.of(), new LinkedHashMap<>());
    }
}
