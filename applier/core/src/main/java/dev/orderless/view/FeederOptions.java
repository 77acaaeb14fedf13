package dev.orderless.view;

import dev.orderless.InvalidConfigurationException;
import dev.orderless.lease.LeaseOptions;
import java.net.InetAddress;
import java.time.Duration;
import java.util.UUID;

/**
 * How a {@link ViewFeeder} runs. Immutable; start from {@link #ofDefaults(String)}.
 *
 * @param resource       the lease name; feeders with the same resource elect one active among them
 * @param owner          this feeder's identity, unique per process incarnation
 * @param commitEvery    commit the resume token after this many events ...
 * @param commitInterval ... or after this long, whichever comes first; a quiet stream commits its
 *                       post-batch token on this interval too, so its position never falls off the oplog
 * @param pollWait       how long one poll of the change stream waits for an event
 * @param standbyPoll    how often a standby tries to take the lease
 * @param bootstrap      how to rebuild when there is no resumable position
 * @param lease          lease timing; a dead active feeder is replaced within about one ttl
 * @param poison         what to do with a change event that still fails after {@code poisonAttempts}
 * @param poisonAttempts how many times one event is tried before {@code poison} decides (at least 1)
 * @param writes         how the view operations of one event are written
 * @param segments       how many {@link Segment}s the source is split into, each with its own lease and
 *                       position (1: one active feeder for the whole view)
 * @param workers        how many segments this process feeds at most at once (1 to {@code segments})
 */
public record FeederOptions(String resource, String owner, int commitEvery, Duration commitInterval, Duration pollWait,
                            Duration standbyPoll, Bootstrap bootstrap, LeaseOptions lease, PoisonPolicy poison,
                            int poisonAttempts, Writes writes, int segments, int workers) {

    /** How the view operations of one change event reach MongoDB. */
    public enum Writes {
        /**
         * All of them in one unordered bulk write ({@link dev.orderless.apply.GuardedApplier#applyAll}), each
         * element the source contributed at its previous version hinted as present, so that its in-place
         * refresh is settled by that one write: about one round trip per event in steady state.
         */
        BULK,
        /**
         * One {@link dev.orderless.apply.GuardedApplier#apply} per operation: an element already in the view
         * costs three round trips (the failed move, a read, the refresh). The benchmark's baseline, and a way
         * out should a server's bulk writes misbehave.
         */
        ONE_AT_A_TIME
    }

    /**
     * How to rebuild the view's position when there is no resumable one: no token was ever committed, or
     * the committed one fell off the oplog (history lost). Never from "now", never across a gap.
     */
    public enum Bootstrap {
        /**
         * Open the change stream, then scan the source collection, then drain the stream (any backend).
         * With no resumable token this is the only correct rebuild: a document last written before the
         * oplog's oldest entry is in no change event, only in the collection.
         */
        SCAN,
        /**
         * Replay the oplog from the last change the view committed (a real replica set; reads local.oplog.rs),
         * but only while the oplog's oldest entry is no newer than it, so nothing between the two is skipped.
         * Otherwise (no position committed yet, or the oplog no longer reaches back to it) it falls back to
         * {@link #SCAN}, and says so in the log.
         */
        OPLOG_START
    }

    /** What happens to a change event that fails every attempt (its projection throws, its view write is refused). */
    public enum PoisonPolicy {
        /**
         * Record it (source id, {@code _v}, reason, time) in the dead-letter collection beside the view, count
         * it, log it at ERROR, and go on. The next good version of that source document heals the view.
         */
        DEAD_LETTER,
        /** Stop the feeder: {@link ViewFeeder.State#FAILED}, with the source id and reason in the failure. */
        FAIL
    }

    /**
     * Checks the values; each is described on the record.
     *
     * @param resource       the lease name; not blank
     * @param owner          this feeder's identity; not blank
     * @param commitEvery    at least 1
     * @param commitInterval positive
     * @param pollWait       positive, and less than half the lease ttl, or the lease would lapse while polling
     * @param standbyPoll    positive
     * @param bootstrap      not null
     * @param lease          not null
     * @param poison         not null
     * @param poisonAttempts 1 to 100
     * @param writes         not null
     * @param segments       1 to {@link Segment#MAX}
     * @param workers        1 to {@code segments}
     * @throws InvalidConfigurationException naming the first value out of those bounds
     */
    public FeederOptions {
        if (resource == null || resource.isBlank()) {
            throw refused("resource", "must name the lease, e.g. \"view:class_rosters\"");
        }
        if (owner == null || owner.isBlank()) {
            throw refused("owner", "must not be empty");
        }
        if (commitEvery < 1) {
            throw refused("commitEvery", "must be at least 1, was " + commitEvery);
        }
        positive("commitInterval", commitInterval);
        positive("pollWait", pollWait);
        positive("standbyPoll", standbyPoll);
        if (bootstrap == null || lease == null) {
            throw new InvalidConfigurationException("feeder options: bootstrap and lease must not be null");
        }
        if (writes == null) {
            throw refused("writes", "must not be null");
        }
        if (poison == null) {
            throw refused("poison", "must not be null");
        }
        if (poisonAttempts < 1 || poisonAttempts > 100) {
            throw refused("poisonAttempts", "must be between 1 and 100, was " + poisonAttempts);
        }
        if (segments < 1 || segments > Segment.MAX) {
            throw refused("segments", "must be between 1 and " + Segment.MAX + ", was " + segments);
        }
        if (workers < 1 || workers > segments) {
            throw refused("workers", "must be between 1 and segments ("
                    + segments + "), was " + workers);
        }
        if (pollWait.compareTo(lease.ttl().dividedBy(2)) >= 0) {
            throw refused("pollWait", "(" + pollWait + ") must be well below half the lease ttl (" + lease.ttl()
                    + "), or the lease lapses while polling");
        }
    }

    /**
     * Commit every 100 events or 1 s, poll 200 ms, standby retries every second, scan bootstrap, 10 s
     * leases, a poison event dead-lettered after 3 attempts, each event's view writes in one bulk write,
     * one segment. The owner is this host's name and a random suffix, so it is new on every call.
     *
     * @param resource the lease name, e.g. {@code "view:class_rosters"}
     * @return the default options for that view
     * @throws InvalidConfigurationException if {@code resource} is blank
     */
    public static FeederOptions ofDefaults(String resource) {
        return new FeederOptions(resource, defaultOwner(), 100, Duration.ofSeconds(1), Duration.ofMillis(200),
                Duration.ofSeconds(1), Bootstrap.SCAN, LeaseOptions.ofDefaults(), PoisonPolicy.DEAD_LETTER, 3, Writes.BULK,
                1, 1);
    }

    /**
     * These options with another owner identity.
     *
     * @param owner unique per process incarnation; not blank
     * @return new options; these are unchanged
     * @throws InvalidConfigurationException if the result is refused (see {@link FeederOptions#FeederOptions})
     */
    public FeederOptions withOwner(String owner) {
        return new FeederOptions(resource, owner, commitEvery, commitInterval, pollWait, standbyPoll, bootstrap, lease,
                poison, poisonAttempts, writes, segments, workers);
    }

    /**
     * These options committing the position after {@code every} events or after {@code interval}, whichever
     * comes first.
     *
     * @param every    at least 1
     * @param interval positive; also how often a quiet stream commits
     * @return new options; these are unchanged
     * @throws InvalidConfigurationException if the result is refused (see {@link FeederOptions#FeederOptions})
     */
    public FeederOptions withCommit(int every, Duration interval) {
        return new FeederOptions(resource, owner, every, interval, pollWait, standbyPoll, bootstrap, lease,
                poison, poisonAttempts, writes, segments, workers);
    }

    /**
     * These options with other polling periods.
     *
     * @param pollWait    how long one poll of the change stream waits; less than half the lease ttl
     * @param standbyPoll how often a standby tries to take the lease; positive
     * @return new options; these are unchanged
     * @throws InvalidConfigurationException if the result is refused (see {@link FeederOptions#FeederOptions})
     */
    public FeederOptions withPolling(Duration pollWait, Duration standbyPoll) {
        return new FeederOptions(resource, owner, commitEvery, commitInterval, pollWait, standbyPoll, bootstrap, lease,
                poison, poisonAttempts, writes, segments, workers);
    }

    /**
     * These options with another way to rebuild when there is no resumable position.
     *
     * @param bootstrap not null
     * @return new options; these are unchanged
     * @throws InvalidConfigurationException if the result is refused (see {@link FeederOptions#FeederOptions})
     */
    public FeederOptions withBootstrap(Bootstrap bootstrap) {
        return new FeederOptions(resource, owner, commitEvery, commitInterval, pollWait, standbyPoll, bootstrap, lease,
                poison, poisonAttempts, writes, segments, workers);
    }

    /**
     * These options with other lease timing.
     *
     * @param lease not null; its ttl must stay above twice {@link #pollWait()}
     * @return new options; these are unchanged
     * @throws InvalidConfigurationException if the result is refused (see {@link FeederOptions#FeederOptions})
     */
    public FeederOptions withLease(LeaseOptions lease) {
        return new FeederOptions(resource, owner, commitEvery, commitInterval, pollWait, standbyPoll, bootstrap, lease,
                poison, poisonAttempts, writes, segments, workers);
    }

    /**
     * These options with another policy for events that keep failing.
     *
     * @param poison   what to do with an event that fails every attempt; not null
     * @param attempts how many times one event is tried first, 1 to 100
     * @return new options; these are unchanged
     * @throws InvalidConfigurationException if the result is refused (see {@link FeederOptions#FeederOptions})
     */
    public FeederOptions withPoison(PoisonPolicy poison, int attempts) {
        return new FeederOptions(resource, owner, commitEvery, commitInterval, pollWait, standbyPoll, bootstrap, lease,
                poison, attempts, writes, segments, workers);
    }

    /**
     * These options with another way of writing each event's view operations.
     *
     * @param writes not null
     * @return new options; these are unchanged
     * @throws InvalidConfigurationException if the result is refused (see {@link FeederOptions#FeederOptions})
     */
    public FeederOptions withWrites(Writes writes) {
        return new FeederOptions(resource, owner, commitEvery, commitInterval, pollWait, standbyPoll, bootstrap, lease,
                poison, poisonAttempts, writes, segments, workers);
    }

    /**
     * Splits the source into {@code segments} {@link Segment}s, each fed under its own lease; this process
     * feeds up to {@code workers} of them at once, and processes share them out between themselves.
     *
     * @param segments how many segments, 1 to {@link Segment#MAX}
     * @param workers  how many of them this process feeds at most at once, 1 to {@code segments}
     * @return new options; these are unchanged
     * @throws InvalidConfigurationException if the result is refused (see {@link FeederOptions#FeederOptions})
     */
    public FeederOptions withSegments(int segments, int workers) {
        return new FeederOptions(resource, owner, commitEvery, commitInterval, pollWait, standbyPoll, bootstrap, lease,
                poison, poisonAttempts, writes, segments, workers);
    }

    /**
     * {@link #withSegments(int, int)} with as many workers as segments.
     *
     * @param segments how many segments, 1 to {@link Segment#MAX}
     * @return new options; these are unchanged
     * @throws InvalidConfigurationException if the result is refused (see {@link FeederOptions#FeederOptions})
     */
    public FeederOptions withSegments(int segments) {
        return withSegments(segments, segments);
    }

    /** These options for one segment's term: its lease is the segment's, and logs name it. */
    FeederOptions forSegment(Segment segment) {
        return new FeederOptions(segment.resource(resource), owner, commitEvery, commitInterval, pollWait, standbyPoll,
                bootstrap, lease, poison, poisonAttempts, writes, segments, workers);
    }

    private static InvalidConfigurationException refused(String setting, String problem) {
        return InvalidConfigurationException.refused("feeder options", setting, problem);
    }

    private static void positive(String parameter, Duration value) {
        if (value == null || value.isNegative() || value.isZero()) {
            throw refused(parameter, "must be positive, was " + value);
        }
    }

    private static String defaultOwner() {
        String host;
        try {
            host = InetAddress.getLocalHost().getHostName();
        } catch (Exception e) {
            host = "host";
        }
        return host + "/" + UUID.randomUUID().toString().substring(0, 8);
    }
}
