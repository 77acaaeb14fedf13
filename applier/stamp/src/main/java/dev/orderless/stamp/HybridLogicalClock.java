package dev.orderless.stamp;

import dev.orderless.InvalidConfigurationException;
import dev.orderless.history.SeqTimeline;
import java.time.Clock;
import java.time.Instant;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A hybrid logical clock: seqs from the wall clock, with a logical counter to stay monotonic, and a node
 * id to stay unique across producers. No round trip.
 *
 * <pre>
 *  63  62 ............................ 22  21 ......... 10  9 ....... 0
 * | 0 | milliseconds since 2020-01-01 (41) | counter (12) | node (10) |
 * </pre>
 *
 * Guarantees:
 * <ol>
 *   <li>unique across producers, as long as no two live producers share a node id (0..1023);
 *   <li>strictly increasing per instance, even when the wall clock steps back: the clock keeps its last
 *       time and counts on (4,096 stamps per millisecond, then it borrows the next millisecond);
 *   <li>ordered across producers up to clock skew: a stamp taken later by more than the skew between two
 *       producers' clocks is larger;
 *   <li>{@link #observe(long)} moves this clock past a seq seen elsewhere (say, a consumed message), so
 *       everything it stamps afterwards is larger.
 * </ol>
 * Good until 2089. Thread-safe, lock-free.
 */
public final class HybridLogicalClock implements Stamper {
    static final long EPOCH_MILLIS = Instant.parse("2020-01-01T00:00:00Z").toEpochMilli();
    static final int NODE_BITS = 10;
    static final int COUNTER_BITS = 12;
    static final long MAX_NODE = (1L << NODE_BITS) - 1;
    static final long MAX_COUNTER = (1L << COUNTER_BITS) - 1;

    private final int node;
    private final Clock clock;
    /** (milliseconds since the epoch above << COUNTER_BITS) | counter, of the last stamp. */
    private final AtomicLong last = new AtomicLong();

    private HybridLogicalClock(int node, Clock clock) {
        this.node = node;
        this.clock = clock;
    }

    /**
     * A clock on the system's UTC time.
     *
     * @param node this producer's id, 0 to 1023, unique among the producers that run at once
     * @return a new clock
     * @throws InvalidConfigurationException if the node is out of range
     */
    public static HybridLogicalClock create(int node) {
        return create(node, Clock.systemUTC());
    }

    /**
     * A clock on {@code clock}'s time (a test's fixed or stepping clock, say).
     *
     * @param node  this producer's id, 0 to 1023, unique among the producers that run at once
     * @param clock the wall clock it reads, after 2020-01-01
     * @return a new clock
     * @throws InvalidConfigurationException if the node is out of range or the clock reads before 2020
     */
    public static HybridLogicalClock create(int node, Clock clock) {
        if (node < 0 || node > MAX_NODE) {
            throw new InvalidConfigurationException("hybrid logical clock: node must be between 0 and " + MAX_NODE
                    + " and unique among live producers, was " + node);
        }
        if (clock == null || clock.millis() <= EPOCH_MILLIS) {
            throw new InvalidConfigurationException("hybrid logical clock: the clock must read after 2020-01-01");
        }
        return new HybridLogicalClock(node, clock);
    }

    /**
     * The node id in the low bits of every seq it stamps.
     *
     * @return 0 to 1023
     */
    public int node() {
        return node;
    }

    /** The next seq; {@code entity} is not needed: seqs are unique for every entity at once. */
    @Override
    public long next(String entity) {
        return next();
    }

    /**
     * The next seq, larger than every seq this clock stamped or {@link #observe observed} before.
     *
     * @return a positive seq
     */
    public long next() {
        long wall = (clock.millis() - EPOCH_MILLIS) << COUNTER_BITS;
        long stamp = last.updateAndGet(previous -> wall > previous ? wall : previous + 1);
        return (stamp << NODE_BITS) | node;
    }

    /** Moves this clock past {@code seq} (from any node), so the next stamp is larger than it. */
    public void observe(long seq) {
        long seen = seq >>> NODE_BITS;
        last.accumulateAndGet(seen, Math::max);
    }

    /** When {@code seq} was stamped, by its stamper's clock. */
    public static Instant timeOf(long seq) {
        return Instant.ofEpochMilli((seq >>> (NODE_BITS + COUNTER_BITS)) + EPOCH_MILLIS);
    }

    /**
     * Where an instant falls among this clock's seqs, for a history read by time
     * ({@code history.asOf(entity, instant, HybridLogicalClock.timeline())}): the highest seq whose
     * {@link #timeOf} is at or before the instant, whichever node stamped it. Its logical part means a burst can
     * stamp ahead of the wall clock; such a seq counts at the time it carries.
     */
    public static SeqTimeline timeline() {
        return instant -> {
            long millis = instant.toEpochMilli() - EPOCH_MILLIS;
            if (millis < 0) {
                return 0;
            }
            return ((millis << COUNTER_BITS | MAX_COUNTER) << NODE_BITS) | MAX_NODE;
        };
    }

    /** The node that stamped {@code seq}. */
    public static int nodeOf(long seq) {
        return (int) (seq & MAX_NODE);
    }
}
