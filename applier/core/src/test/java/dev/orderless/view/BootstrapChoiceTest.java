package dev.orderless.view;

import static org.assertj.core.api.Assertions.assertThat;

import dev.orderless.view.BootstrapChoice.ReplayOplog;
import dev.orderless.view.BootstrapChoice.Resume;
import dev.orderless.view.BootstrapChoice.Scan;
import dev.orderless.view.FeederOptions.Bootstrap;
import java.util.Optional;
import java.util.function.Supplier;
import org.bson.BsonDocument;
import org.bson.BsonString;
import org.bson.BsonTimestamp;
import org.junit.jupiter.api.Test;

/** Where a term's change stream starts: no MongoDB needed. */
class BootstrapChoiceTest {
    private static final BsonDocument TOKEN = new BsonDocument("_data", new BsonString("8263"));
    private static final BsonTimestamp COMMITTED = new BsonTimestamp(1_700_000_000, 5);
    private static final Supplier<BsonTimestamp> OPLOG_NOT_ASKED = () -> {
        throw new AssertionError("the oplog was read");
    };

    @Test
    void a_stored_position_resumes_after_its_token_whatever_the_bootstrap() {
        Optional<Position> stored = Optional.of(new Position(TOKEN, Optional.empty(), Optional.of(COMMITTED)));

        assertThat(BootstrapChoice.atTermStart("v", stored, Bootstrap.SCAN, OPLOG_NOT_ASKED)).isEqualTo(new Resume(TOKEN));
        assertThat(BootstrapChoice.atTermStart("v", stored, Bootstrap.OPLOG_START, OPLOG_NOT_ASKED))
                .isEqualTo(new Resume(TOKEN));
    }

    @Test
    void no_stored_position_rebuilds_by_a_scan_counted_as_no_token() {
        assertThat(BootstrapChoice.atTermStart("v", Optional.empty(), Bootstrap.SCAN, OPLOG_NOT_ASKED))
                .isEqualTo(new Scan(false));
    }

    @Test
    void no_stored_position_scans_even_with_oplog_start_since_there_is_no_change_to_replay_from() {
        assertThat(BootstrapChoice.atTermStart("v", Optional.empty(), Bootstrap.OPLOG_START, OPLOG_NOT_ASKED))
                .isEqualTo(new Scan(false));
    }

    @Test
    void history_lost_with_scan_rebuilds_by_a_scan_counted_as_history_lost() {
        assertThat(BootstrapChoice.rebuild("v", true, Bootstrap.SCAN, Optional.of(COMMITTED), OPLOG_NOT_ASKED))
                .isEqualTo(new Scan(true));
    }

    @Test
    void history_lost_with_oplog_start_replays_from_the_last_committed_change_while_the_oplog_reaches_it() {
        assertThat(BootstrapChoice.rebuild("v", true, Bootstrap.OPLOG_START, Optional.of(COMMITTED),
                () -> new BsonTimestamp(1_699_000_000, 1))).isEqualTo(new ReplayOplog(COMMITTED, true));
    }

    @Test
    void history_lost_with_oplog_start_scans_once_the_oplog_no_longer_reaches_the_last_committed_change() {
        assertThat(BootstrapChoice.rebuild("v", true, Bootstrap.OPLOG_START, Optional.of(COMMITTED),
                () -> new BsonTimestamp(1_700_000_001, 1))).isEqualTo(new Scan(true));
    }

    @Test
    void oplog_start_replays_only_from_the_last_committed_change_and_only_while_the_oplog_reaches_it() {
        BsonTimestamp committed = new BsonTimestamp(1_700_000_000, 5);

        assertThat(BootstrapChoice.oplogStart("v", Optional.of(committed), () -> new BsonTimestamp(1_699_000_000, 1)))
                .contains(committed);
        assertThat(BootstrapChoice.oplogStart("v", Optional.of(committed), () -> new BsonTimestamp(1_700_000_001, 1)))
                .as("the oplog lost what lies between: a gap").isEmpty();
        assertThat(BootstrapChoice.oplogStart("v", Optional.empty(), () -> new BsonTimestamp(1, 1)))
                .as("no committed change: only a scan sees documents older than the oplog").isEmpty();
    }

    @Test
    void a_history_lost_error_is_told_apart_from_other_failures() {
        assertThat(BootstrapChoice.historyLost(new com.mongodb.MongoCommandException(
                new BsonDocument("code", new org.bson.BsonInt32(286)).append("errmsg", new org.bson.BsonString("lost")),
                new com.mongodb.ServerAddress()))).isTrue();
        assertThat(BootstrapChoice.historyLost(new com.mongodb.MongoCommandException(
                new BsonDocument("code", new org.bson.BsonInt32(11000)).append("errmsg", new org.bson.BsonString("dup")),
                new com.mongodb.ServerAddress()))).isFalse();
    }
}
