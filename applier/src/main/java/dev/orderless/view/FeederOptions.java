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
 * @param bootstrap      how to start when no resume token is stored
 * @param lease          lease timing; a dead active feeder is replaced within about one ttl
 */
public record FeederOptions(String resource, String owner, int commitEvery, Duration commitInterval, Duration pollWait,
                            Duration standbyPoll, Bootstrap bootstrap, LeaseOptions lease) {

    /** Starting without a stored resume token, without missing a write made before the start. */
    public enum Bootstrap {
        /** Open the change stream, then scan the source collection, then drain the stream (any backend). */
        SCAN,
        /** Start the change stream at the oldest oplog entry (a real replica set; reads local.oplog.rs). */
        OPLOG_START
    }

    public FeederOptions {
        if (resource == null || resource.isBlank()) {
            throw new InvalidConfigurationException("feeder options: resource must name the lease, e.g. \"view:class_rosters\"");
        }
        if (owner == null || owner.isBlank()) {
            throw new InvalidConfigurationException("feeder options: owner must not be empty");
        }
        if (commitEvery < 1) {
            throw new InvalidConfigurationException("feeder options: commitEvery must be at least 1, was " + commitEvery);
        }
        positive("commitInterval", commitInterval);
        positive("pollWait", pollWait);
        positive("standbyPoll", standbyPoll);
        if (bootstrap == null || lease == null) {
            throw new InvalidConfigurationException("feeder options: bootstrap and lease must not be null");
        }
        if (pollWait.compareTo(lease.ttl().dividedBy(2)) >= 0) {
            throw new InvalidConfigurationException("feeder options: pollWait (" + pollWait
                    + ") must be well below half the lease ttl (" + lease.ttl() + "), or the lease lapses while polling");
        }
    }

    /** Commit every 100 events or 1 s, poll 200 ms, standby retries every second, scan bootstrap, 10 s leases. */
    public static FeederOptions ofDefaults(String resource) {
        return new FeederOptions(resource, defaultOwner(), 100, Duration.ofSeconds(1), Duration.ofMillis(200),
                Duration.ofSeconds(1), Bootstrap.SCAN, LeaseOptions.ofDefaults());
    }

    public FeederOptions withOwner(String owner) {
        return new FeederOptions(resource, owner, commitEvery, commitInterval, pollWait, standbyPoll, bootstrap, lease);
    }

    public FeederOptions withCommit(int every, Duration interval) {
        return new FeederOptions(resource, owner, every, interval, pollWait, standbyPoll, bootstrap, lease);
    }

    public FeederOptions withPolling(Duration pollWait, Duration standbyPoll) {
        return new FeederOptions(resource, owner, commitEvery, commitInterval, pollWait, standbyPoll, bootstrap, lease);
    }

    public FeederOptions withBootstrap(Bootstrap bootstrap) {
        return new FeederOptions(resource, owner, commitEvery, commitInterval, pollWait, standbyPoll, bootstrap, lease);
    }

    public FeederOptions withLease(LeaseOptions lease) {
        return new FeederOptions(resource, owner, commitEvery, commitInterval, pollWait, standbyPoll, bootstrap, lease);
    }

    private static void positive(String parameter, Duration value) {
        if (value == null || value.isNegative() || value.isZero()) {
            throw new InvalidConfigurationException("feeder options: " + parameter + " must be positive, was " + value);
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
