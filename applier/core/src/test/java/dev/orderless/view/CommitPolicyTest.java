package dev.orderless.view;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.time.Instant;
import java.util.Optional;
import org.bson.BsonDocument;
import org.bson.BsonString;
import org.junit.jupiter.api.Test;

/** When a term commits its resume token: no MongoDB needed. */
class CommitPolicyTest {
    private static final Instant START = Instant.parse("2026-11-25T12:00:00Z");
    private static final Duration INTERVAL = Duration.ofSeconds(1);
    private static final Optional<BsonDocument> STORED = Optional.of(token("stored"));

    private static BsonDocument token(String data) {
        return new BsonDocument("_data", new BsonString(data));
    }

    private static CommitPolicy everyThree() {
        return new CommitPolicy(3, INTERVAL, STORED, START);
    }

    @Test
    void nothing_is_due_before_commit_every_events_or_the_interval() {
        CommitPolicy policy = everyThree();
        policy.event();
        policy.event();

        assertThat(policy.due(Optional.of(token("a")), START.plusMillis(999))).isEmpty();
    }

    @Test
    void the_token_is_due_after_commit_every_events() {
        CommitPolicy policy = everyThree();
        policy.event();
        policy.event();
        policy.event();

        assertThat(policy.due(Optional.of(token("a")), START)).contains(token("a"));
    }

    @Test
    void a_quiet_stream_commits_its_post_batch_token_on_the_interval() {
        CommitPolicy policy = everyThree();

        assertThat(policy.due(Optional.of(token("post-batch")), START.plus(INTERVAL))).contains(token("post-batch"));
    }

    @Test
    void after_a_commit_the_count_and_the_interval_start_again() {
        CommitPolicy policy = everyThree();
        policy.event();
        policy.event();
        policy.event();
        policy.committed(token("a"), START.plusMillis(10));
        policy.event();

        assertThat(policy.due(Optional.of(token("b")), START.plusMillis(1009))).isEmpty();
        assertThat(policy.due(Optional.of(token("b")), START.plusMillis(1010))).contains(token("b"));
    }

    @Test
    void the_token_last_committed_is_not_committed_again() {
        CommitPolicy policy = everyThree();

        assertThat(policy.due(STORED, START.plus(INTERVAL))).isEmpty();
        assertThat(policy.due(Optional.empty(), START.plus(INTERVAL))).as("a stream with no token yet").isEmpty();
    }

    @Test
    void a_due_commit_with_nothing_new_starts_the_interval_again_but_keeps_the_event_count() {
        CommitPolicy policy = everyThree();
        policy.due(STORED, START.plus(INTERVAL));   // due, nothing new: the interval restarts here

        assertThat(policy.due(Optional.of(token("a")), START.plus(INTERVAL).plusMillis(999))).isEmpty();
        policy.event();
        policy.event();
        policy.event();
        assertThat(policy.due(Optional.of(token("a")), START.plus(INTERVAL).plusMillis(999))).contains(token("a"));
    }

    @Test
    void a_clean_stop_hands_over_the_latest_token_only_if_it_was_not_committed() {
        CommitPolicy policy = everyThree();

        assertThat(policy.onStop(STORED)).isEmpty();
        assertThat(policy.onStop(Optional.empty())).isEmpty();
        assertThat(policy.onStop(Optional.of(token("a")))).contains(token("a"));
        policy.committed(token("a"), START);
        assertThat(policy.onStop(Optional.of(token("a")))).isEmpty();
    }

    @Test
    void a_term_without_a_stored_position_commits_its_first_token() {
        CommitPolicy policy = new CommitPolicy(3, INTERVAL, Optional.empty(), START);

        assertThat(policy.due(Optional.of(token("a")), START.plus(INTERVAL))).contains(token("a"));
    }
}
