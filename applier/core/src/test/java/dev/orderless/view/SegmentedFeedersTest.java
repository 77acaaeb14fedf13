package dev.orderless.view;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.mongodb.client.MongoDatabase;
import dev.orderless.InvalidConfigurationException;
import dev.orderless.testing.MongoExtension;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.atomic.AtomicBoolean;
import org.awaitility.Awaitility;
import org.bson.BsonInt64;
import org.bson.BsonObjectId;
import org.bson.BsonString;
import org.bson.types.ObjectId;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * A view fed by segments: each source document belongs to one segment by a stable hash of its id; the
 * feeders of several processes (here: several feeders, each with its own owner) share the segments, take
 * over a dead one's, and give some up when another joins. The view always ends equal to the projection of
 * the final sources, every entry at its student's final version.
 */
@ExtendWith(MongoExtension.class)
class SegmentedFeedersTest {

    @Test
    void the_segment_of_an_id_is_pinned_so_a_running_view_never_reshuffles() {
        // computed once and kept: a change here moves documents between the segments of running views
        assertThat(List.of(Segment.of(new BsonString("s1"), 4), Segment.of(new BsonString("s2"), 4),
                Segment.of(new BsonString("alice"), 4), Segment.of(new BsonInt64(42), 4),
                Segment.of(new BsonObjectId(new ObjectId("65a1b2c3d4e5f60718293a4b")), 7)))
                .containsExactly(PINNED);
    }

    private static final Integer[] PINNED = {0, 3, 1, 2, 6};

    @Test
    void every_id_has_exactly_one_segment_and_the_segments_are_near_even() {
        int[] counts = new int[4];
        for (int i = 0; i < 4000; i++) {
            BsonString id = new BsonString("student-" + i);
            int owners = 0;
            for (int s = 0; s < 4; s++) {
                owners += new Segment(s, 4).owns(id) ? 1 : 0;
            }
            assertThat(owners).as("segments owning %s", id).isEqualTo(1);
            counts[Segment.of(id, 4)]++;
        }
        assertThat(java.util.Arrays.stream(counts).boxed().toList()).allSatisfy(n -> assertThat(n).isBetween(850, 1150));
    }

    @Test
    void a_segment_has_its_own_lease_and_an_unsegmented_view_keeps_its_old_one() {
        assertThat(new Segment(2, 4).resource("view:rosters")).isEqualTo("view:rosters#2/4");
        assertThat(Segment.whole().resource("view:rosters")).isEqualTo("view:rosters");
        assertThatThrownBy(() -> FeederOptions.ofDefaults("v").withSegments(4, 5))
                .isInstanceOf(InvalidConfigurationException.class).hasMessageContaining("workers must be between 1 and"
                        + " segments (4), was 5");
    }

    @Test
    void two_processes_share_four_segments_and_one_killed_mid_stream_skips_no_change(MongoDatabase db) throws Exception {
        try (ViewFixture f = new ViewFixture(db)) {
            AtomicBoolean writing = new AtomicBoolean(true);
            Thread writer = writer(f, writing, 1);
            ViewFeeder a = f.start(f.options("a").withSegments(4), ViewFixture::rosterOps, new SimpleMeterRegistry());
            ViewFeeder b = f.start(f.options("b").withSegments(4), ViewFixture::rosterOps, new SimpleMeterRegistry());
            writer.start();
            try {
                Awaitility.await("two segments each").atMost(Duration.ofSeconds(30))
                        .until(() -> a.fences().size() == 2 && b.fences().size() == 2);
                a.halt();   // killed: its two leases lapse, b takes them over
                Awaitility.await("b feeds all four").atMost(Duration.ofSeconds(30)).until(() -> b.fences().size() == 4);
            } finally {
                writing.set(false);
                writer.join(Duration.ofSeconds(30).toMillis());
            }
            f.awaitViewMatchesSource();
            assertThat(f.view()).isEqualTo(f.expected());
        }
    }

    @Test
    void a_third_process_joining_takes_its_share(MongoDatabase db) throws Exception {
        try (ViewFixture f = new ViewFixture(db)) {
            AtomicBoolean writing = new AtomicBoolean(true);
            Thread writer = writer(f, writing, 2);
            ViewFeeder a = f.start(f.options("a").withSegments(6), ViewFixture::rosterOps, new SimpleMeterRegistry());
            ViewFeeder b = f.start(f.options("b").withSegments(6), ViewFixture::rosterOps, new SimpleMeterRegistry());
            writer.start();
            try {
                Awaitility.await("three segments each").atMost(Duration.ofSeconds(30))
                        .until(() -> a.fences().size() == 3 && b.fences().size() == 3);
                ViewFeeder c = f.start(f.options("c").withSegments(6), ViewFixture::rosterOps, new SimpleMeterRegistry());
                Awaitility.await("two segments each").atMost(Duration.ofSeconds(30))
                        .until(() -> a.fences().size() == 2 && b.fences().size() == 2 && c.fences().size() == 2);
                Set<Segment> all = new HashSet<>(a.fences().keySet());
                all.addAll(b.fences().keySet());
                all.addAll(c.fences().keySet());
                assertThat(all).as("every segment fed once").hasSize(6);
            } finally {
                writing.set(false);
                writer.join(Duration.ofSeconds(30).toMillis());
            }
            f.awaitViewMatchesSource();
            assertThat(f.view()).isEqualTo(f.expected());
        }
    }

    @Test
    void a_segment_that_no_other_process_can_take_is_not_handed_round_in_circles(MongoDatabase db) {
        try (ViewFixture f = new ViewFixture(db)) {
            SimpleMeterRegistry meters = new SimpleMeterRegistry();
            ViewFeeder a = f.start(f.options("a").withSegments(4), ViewFixture::rosterOps, meters);
            Awaitility.await("a feeds all four").atMost(Duration.ofSeconds(30)).until(() -> a.fences().size() == 4);
            // b may feed one segment only: of a's share of 2, one surplus segment has nowhere to go
            ViewFeeder b = f.start(f.options("b").withSegments(4, 1), ViewFixture::rosterOps, new SimpleMeterRegistry());
            // a gives up two: b takes the first; the second stays free for a ttl and a takes it back. Waiting
            // for both releases matters: between them, a holding three and b one is only a passing state
            Awaitility.await("b feeds one, a takes the surplus back").atMost(Duration.ofSeconds(30))
                    .until(() -> released(meters) >= 2 && b.fences().size() == 1 && a.fences().size() == 3);
            double released = released(meters);
            // a lease ttl is 1 s here: an endless hand-round would release again every 2 to 3 s, where the
            // back-off keeps the surplus for 10 s
            Awaitility.await("a keeps its surplus").during(Duration.ofSeconds(5)).atMost(Duration.ofSeconds(8))
                    .until(() -> released(meters) == released && a.fences().size() == 3 && b.fences().size() == 1);
        }
    }

    /**
     * The documented procedure: start feeders with the new number beside the old ones (both write the view;
     * the writes are guarded, so the overlap is harmless), wait until every new segment is fed and caught
     * up, then stop the old ones.
     */
    @Test
    void the_number_of_segments_changes_by_running_the_new_feeders_beside_the_old_until_they_caught_up(MongoDatabase db)
            throws Exception {
        try (ViewFixture f = new ViewFixture(db)) {
            AtomicBoolean writing = new AtomicBoolean(true);
            Thread writer = writer(f, writing, 3);
            ViewFeeder old1 = f.start(f.options("old-1").withSegments(2), ViewFixture::rosterOps, new SimpleMeterRegistry());
            ViewFeeder old2 = f.start(f.options("old-2").withSegments(2), ViewFixture::rosterOps, new SimpleMeterRegistry());
            writer.start();
            try {
                Awaitility.await("the old segments fed").atMost(Duration.ofSeconds(30))
                        .until(() -> old1.fences().size() + old2.fences().size() == 2);
                ViewFeeder new1 = f.start(f.options("new-1").withSegments(4), ViewFixture::rosterOps,
                        new SimpleMeterRegistry());
                ViewFeeder new2 = f.start(f.options("new-2").withSegments(4), ViewFixture::rosterOps,
                        new SimpleMeterRegistry());
                Awaitility.await("every new segment fed and caught up").atMost(Duration.ofSeconds(30))
                        .until(() -> new1.fences().size() + new2.fences().size() == 4
                                && new1.lag().isPresent() && new2.lag().isPresent()
                                && new1.lag().get().compareTo(Duration.ofSeconds(2)) < 0
                                && new2.lag().get().compareTo(Duration.ofSeconds(2)) < 0);
                old1.close();
                old2.close();
                Awaitility.await("the new ones share them evenly").atMost(Duration.ofSeconds(30))
                        .until(() -> new1.fences().size() == 2 && new2.fences().size() == 2);
            } finally {
                writing.set(false);
                writer.join(Duration.ofSeconds(30).toMillis());
            }
            f.awaitViewMatchesSource();
            assertThat(f.view()).isEqualTo(f.expected());
        }
    }

    private static double released(SimpleMeterRegistry meters) {
        return meters.get("orderless.view.leadership").tag("event", "released").counter().count();
    }

    private static Thread writer(ViewFixture f, AtomicBoolean writing, long seed) {
        return f.writer(writing, seed, new java.util.concurrent.atomic.AtomicLong());
    }
}
