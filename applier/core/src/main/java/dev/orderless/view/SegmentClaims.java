package dev.orderless.view;

import dev.orderless.OrderlessException;
import dev.orderless.lease.Lease;
import dev.orderless.lease.LeaseProvider;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeSet;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Which segments of a view this process's workers try to take, and which one it gives up, so that the
 * segments spread over the processes feeding the view.
 *
 * <ol>
 *   <li>Every process feeding a segmented view holds a member lease, {@code <resource>#members-N/<owner>},
 *       kept alive by its workers ({@link #alive()}). N is in the name: while a view moves to another
 *       number of segments, the processes of each number share out their own segments only.
 *   <li>At most once per standby poll, one query lists the live leases under {@code <resource>#}: the
 *       members, and who holds which segment.
 *   <li>The share is {@code ceil(segments / members)}. Below its share (and its workers), a process claims
 *       free segments at once; at or above it, only a segment that stayed free for a lease ttl (nobody
 *       else could take it: the others are at their workers' limit).
 *   <li>Above its share, a process gives up one segment (the highest it holds): its worker commits its
 *       position and releases the lease, so another process takes it at once. It does not claim that
 *       segment again for a lease ttl. If it must take one back anyway (nobody else took it: the others
 *       are at their workers' limit), it keeps its surplus for {@value #RELEASE_BACKOFF_TTLS} ttls before
 *       trying again, so a segment is not handed round in circles.
 * </ol>
 * An unsegmented view skips all this: its one segment is tried every standby poll, as always. With a
 * lease provider that cannot list leases, every segment not held here is tried and none is given up.
 * Losing a race for a lease is harmless: the lease decides, this only chooses what to ask for.
 */
final class SegmentClaims {
    private static final Logger log = LoggerFactory.getLogger(SegmentClaims.class);

    private final LeaseProvider leases;
    private final FeederOptions options;
    private final Clock clock;
    private final Duration ttl;
    private final TreeSet<Integer> held = new TreeSet<>();
    private final Map<Integer, Instant> freeSince = new HashMap<>();
    private final Map<Integer, Instant> cooling = new HashMap<>();
    /** Segments given up as surplus, and when: taking one back soon after means nobody else wanted it. */
    private final Map<Integer, Instant> given = new HashMap<>();
    private final java.util.Set<Integer> overflow = new java.util.HashSet<>();
    private Optional<Map<String, String>> holders = Optional.empty();
    private Instant refreshedAt = Instant.MIN;
    private int members = 1;
    private Optional<Integer> releasing = Optional.empty();
    private Optional<Lease> member = Optional.empty();
    private Instant memberTriedAt = Instant.MIN;
    private Instant noReleaseUntil = Instant.MIN;
    /** How long, in lease ttls, a process keeps a surplus segment that nobody else would take. */
    static final int RELEASE_BACKOFF_TTLS = 10;
    /** How long, in lease ttls, after giving a segment up, taking it back counts as nobody else wanting it. */
    static final int RECENT_TTLS = 5;

    SegmentClaims(LeaseProvider leases, FeederOptions options) {
        this.leases = leases;
        this.options = options;
        this.clock = options.lease().clock();
        this.ttl = options.lease().ttl();
    }

    private boolean segmented() {
        return options.segments() > 1;
    }

    /** The segments worth asking for now, best first; empty if this process should take none now. */
    synchronized List<Segment> candidates() {
        List<Segment> candidates = new ArrayList<>();
        overflow.clear();
        if (held.size() >= options.workers()) {
            return candidates;
        }
        refreshIfDue();
        Instant now = clock.instant();
        int share = share();
        for (int i = 0; i < options.segments(); i++) {
            Segment segment = new Segment(i, options.segments());
            if (held.contains(i) || now.isBefore(cooling.getOrDefault(i, Instant.MIN))) {
                continue;
            }
            if (holders.isEmpty()) {
                candidates.add(segment);   // cannot tell which are free: try each
            } else if (!holders.get().containsKey(segment.resource(options.resource()))) {
                if (held.size() < share) {
                    candidates.add(segment);
                } else if (!now.isBefore(freeSince.getOrDefault(i, now).plus(ttl))) {
                    candidates.add(segment);   // nobody else took it: beyond the share
                    overflow.add(i);
                }
            }
        }
        return candidates;
    }

    synchronized void taken(Segment segment) {
        held.add(segment.index());
        freeSince.remove(segment.index());
        Instant now = clock.instant();
        Instant givenUp = given.remove(segment.index());
        boolean takenBack = givenUp != null && now.isBefore(givenUp.plus(ttl.multipliedBy(RECENT_TTLS)));
        if (overflow.contains(segment.index()) || takenBack) {
            // a segment nobody else took for a ttl (the others are at their workers' limit), or one this process
            // gave up moments ago whatever the share looked like then (a member's lease may have flickered):
            // giving it up again would only hand it round in circles, so keep the surplus for a while
            noReleaseUntil = now.plus(ttl.multipliedBy(RELEASE_BACKOFF_TTLS));
        }
    }

    synchronized void given(Segment segment) {
        held.remove(segment.index());
        if (releasing.equals(Optional.of(segment.index()))) {
            releasing = Optional.empty();
            cooling.put(segment.index(), clock.instant().plus(ttl));
            given.put(segment.index(), clock.instant());
        }
    }

    /** True if the worker on {@code segment} should finish its term and release it: this process has too many. */
    synchronized boolean shouldRelease(Segment segment) {
        if (!segmented()) {
            return false;
        }
        refreshIfDue();
        if (holders.isPresent() && releasing.isEmpty() && held.size() > share()
                && !clock.instant().isBefore(noReleaseUntil)) {
            int highest = held.last();
            releasing = Optional.of(highest);
            log.info("feeder '{}' holds {} segments, more than its share of {} among {} processes: giving up {}",
                    options.resource(), held.size(), share(), members, new Segment(highest, options.segments()));
        }
        return releasing.equals(Optional.of(segment.index()));
    }

    /** Keeps this process's member lease alive (taking it again if it lapsed); true. */
    synchronized boolean alive() {
        if (!segmented()) {
            return true;
        }
        if (member.isPresent() && !member.get().isHeld()) {
            member.get().abandon();
            member = Optional.empty();
        }
        Instant now = clock.instant();
        if (member.isEmpty() && !now.isBefore(memberTriedAt.plus(options.standbyPoll()))) {
            memberTriedAt = now;   // at most once per standby poll, however often the workers ask
            try {
                member = leases.tryAcquire(memberPrefix() + options.owner(), options.owner());
            } catch (OrderlessException e) {
                log.debug("feeder '{}': member lease not renewed: {}", options.resource(), e.getMessage());
            }
        }
        member.ifPresent(Lease::heartbeat);
        return true;
    }

    /** Gives up the member lease: released, or (a crash) left to lapse. */
    synchronized void close(boolean release) {
        member.ifPresent(lease -> {
            if (release) {
                lease.close();
            } else {
                lease.abandon();
            }
        });
        member = Optional.empty();
    }

    private String memberPrefix() {
        return options.resource() + "#members-" + options.segments() + "/";
    }

    private int share() {
        return (options.segments() + members - 1) / members;
    }

    private void refreshIfDue() {
        Instant now = clock.instant();
        if (!segmented() || now.isBefore(refreshedAt.plus(options.standbyPoll()))) {
            return;
        }
        refreshedAt = now;
        try {
            holders = leases.holders(options.resource() + "#");
        } catch (OrderlessException e) {
            log.debug("feeder '{}': leases not listed: {}", options.resource(), e.getMessage());
            return;   // keep the last view: the leases decide anyway
        }
        holders.ifPresent(live -> {
            String prefix = memberPrefix();
            members = Math.max(1, (int) live.keySet().stream().filter(r -> r.startsWith(prefix)).count());
            for (int i = 0; i < options.segments(); i++) {
                if (live.containsKey(new Segment(i, options.segments()).resource(options.resource()))) {
                    freeSince.remove(i);
                } else {
                    freeSince.putIfAbsent(i, now);
                }
            }
        });
    }
}
