package dev.orderless.stamp;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.orderless.InvalidConfigurationException;
import java.time.Clock;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

class HybridLogicalClockTest {

    /** A wall clock that moves forward 1 ms per read, and every 1,000th read steps back 5 seconds. */
    static final class SteppingBackClock extends Clock {
        private final AtomicLong reads = new AtomicLong();
        private final AtomicLong millis = new AtomicLong(Instant.parse("2026-11-21T00:00:00Z").toEpochMilli());
        final AtomicLong stepsBack = new AtomicLong();

        @Override
        public long millis() {
            if (reads.incrementAndGet() % 1000 == 0) {
                stepsBack.incrementAndGet();
                return millis.addAndGet(-5_000);
            }
            return millis.incrementAndGet();
        }

        @Override
        public Instant instant() {
            return Instant.ofEpochMilli(millis());
        }

        @Override
        public ZoneId getZone() {
            return ZoneOffset.UTC;
        }

        @Override
        public Clock withZone(ZoneId zone) {
            return this;
        }
    }

    @Test
    void two_clocks_on_eight_threads_each_stay_unique_and_monotonic_while_the_wall_clock_steps_back() throws Exception {
        SteppingBackClock wall1 = new SteppingBackClock();
        SteppingBackClock wall2 = new SteppingBackClock();
        HybridLogicalClock one = HybridLogicalClock.create(1, wall1);
        HybridLogicalClock two = HybridLogicalClock.create(2, wall2);

        List<List<StampRun.Stamp>> runs = StampRun.run(List.of(one, two), 8, 10_000, 50);

        Set<Long> all = new HashSet<>();
        for (List<StampRun.Stamp> run : runs) {
            long previous = 0;
            for (StampRun.Stamp s : run) {
                assertThat(s.seq()).as("monotonic per instance, in each thread's order").isGreaterThan(previous);
                assertThat(HybridLogicalClock.nodeOf(s.seq())).isEqualTo(s.instance() + 1);
                previous = s.seq();
                all.add(s.seq());
            }
        }
        assertThat(all).as("unique across both instances").hasSize(2 * 8 * 10_000);
        assertThat(wall1.stepsBack.get() + wall2.stepsBack.get()).as("the wall clocks did step back").isPositive();
        System.out.printf("[stamp] hybrid logical clock: 2 clocks x 8 threads x 10000 stamps = %d unique stamps,"
                + " monotonic per clock, across %d steps back of the wall clock%n", all.size(),
                wall1.stepsBack.get() + wall2.stepsBack.get());
    }

    @Test
    void a_stamp_taken_later_than_the_clock_skew_is_larger_across_producers() {
        Clock early = Clock.fixed(Instant.parse("2026-11-21T10:00:00.000Z"), ZoneOffset.UTC);
        Clock later = Clock.fixed(Instant.parse("2026-11-21T10:00:00.001Z"), ZoneOffset.UTC);
        HybridLogicalClock a = HybridLogicalClock.create(900, early);
        HybridLogicalClock b = HybridLogicalClock.create(3, later);

        long fromA = a.next();
        long fromB = b.next();

        assertThat(fromB).isGreaterThan(fromA);
        assertThat(HybridLogicalClock.timeOf(fromA)).isEqualTo(early.instant());
    }

    @Test
    void observing_a_seq_moves_the_clock_past_it() {
        Clock frozen = Clock.fixed(Instant.parse("2026-11-21T10:00:00Z"), ZoneOffset.UTC);
        HybridLogicalClock behind = HybridLogicalClock.create(1, frozen);
        HybridLogicalClock ahead = HybridLogicalClock.create(2,
                Clock.fixed(Instant.parse("2026-11-21T11:00:00Z"), ZoneOffset.UTC));
        long seen = ahead.next();

        behind.observe(seen);

        assertThat(behind.next()).isGreaterThan(seen);
    }

    @Test
    void more_than_4096_stamps_in_one_millisecond_borrow_the_next_one_and_stay_increasing() {
        HybridLogicalClock clock = HybridLogicalClock.create(5,
                Clock.fixed(Instant.parse("2026-11-21T10:00:00Z"), ZoneOffset.UTC));
        long previous = 0;
        for (int i = 0; i < 10_000; i++) {
            long seq = clock.next();
            assertThat(seq).isGreaterThan(previous);
            previous = seq;
        }
        assertThat(HybridLogicalClock.timeOf(previous)).isEqualTo(Instant.parse("2026-11-21T10:00:00.002Z"));
    }

    @Test
    void a_node_id_out_of_range_fails_at_start_up() {
        assertThatThrownBy(() -> HybridLogicalClock.create(1024)).isInstanceOf(InvalidConfigurationException.class)
                .hasMessageContaining("node must be between 0 and 1023");
    }

    @Test
    void the_timeline_puts_every_seq_stamped_by_an_instant_at_or_below_its_last_seq_and_none_stamped_later() {
        Instant at = Instant.parse("2026-11-25T12:00:00Z");
        HybridLogicalClock node7 = HybridLogicalClock.create(7, Clock.fixed(at, ZoneOffset.UTC));
        HybridLogicalClock later = HybridLogicalClock.create(1, Clock.fixed(at.plusMillis(1), ZoneOffset.UTC));
        long last = HybridLogicalClock.timeline().lastSeqAt(at);

        assertThat(node7.next()).isLessThanOrEqualTo(last);
        assertThat(later.next()).isGreaterThan(last);
        assertThat(HybridLogicalClock.timeOf(last)).isEqualTo(at);
        assertThat(HybridLogicalClock.timeline().lastSeqAt(Instant.parse("2019-01-01T00:00:00Z"))).isZero();
    }
}
