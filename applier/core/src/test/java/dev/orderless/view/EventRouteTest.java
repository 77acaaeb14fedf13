package dev.orderless.view;

import static org.assertj.core.api.Assertions.assertThat;

import com.mongodb.client.model.changestream.OperationType;
import org.bson.BsonDocument;
import org.bson.BsonInt32;
import org.bson.BsonString;
import org.bson.BsonValue;
import org.junit.jupiter.api.Test;

/** What a term does with one change event: no MongoDB needed. */
class EventRouteTest {
    private static final Segment FIRST_OF_TWO = new Segment(0, 2);

    private static BsonDocument doc(BsonValue id) {
        return new BsonDocument("_id", id).append("name", new BsonString("Ada"));
    }

    /** An id whose document belongs to {@code segment}, another's if {@code mine} is false. */
    private static BsonValue id(Segment segment, boolean mine) {
        for (int i = 0; ; i++) {
            BsonValue id = new BsonString("student-" + i);
            if (segment.owns(id) == mine) {
                return id;
            }
        }
    }

    @Test
    void a_document_of_this_segment_is_projected() {
        BsonValue mine = id(FIRST_OF_TWO, true);

        assertThat(EventRoute.of(OperationType.UPDATE, doc(mine), new BsonDocument("_id", mine), FIRST_OF_TWO))
                .isEqualTo(EventRoute.PROJECT);
    }

    @Test
    void a_document_of_another_segment_is_ignored() {
        BsonValue other = id(FIRST_OF_TWO, false);

        assertThat(EventRoute.of(OperationType.INSERT, doc(other), new BsonDocument("_id", other), FIRST_OF_TWO))
                .isEqualTo(EventRoute.IGNORE);
        assertThat(EventRoute.of(OperationType.DELETE, null, new BsonDocument("_id", other), FIRST_OF_TWO))
                .isEqualTo(EventRoute.IGNORE);
    }

    @Test
    void ownership_goes_by_the_full_document_not_a_wrong_document_key() {
        BsonValue mine = id(FIRST_OF_TWO, true);
        BsonValue other = id(FIRST_OF_TWO, false);

        assertThat(EventRoute.of(OperationType.UPDATE, doc(mine), new BsonDocument("_id", other), FIRST_OF_TWO))
                .isEqualTo(EventRoute.PROJECT);
    }

    @Test
    void a_delete_takes_back_what_the_source_contributed() {
        BsonValue mine = id(FIRST_OF_TWO, true);

        assertThat(EventRoute.of(OperationType.DELETE, null, new BsonDocument("_id", mine), FIRST_OF_TWO))
                .isEqualTo(EventRoute.DELETE);
    }

    @Test
    void an_update_whose_document_was_deleted_before_the_lookup_is_skipped() {
        assertThat(EventRoute.of(OperationType.UPDATE, null, new BsonDocument("_id", new BsonInt32(1)), Segment.whole()))
                .isEqualTo(EventRoute.SKIP);
    }

    @Test
    void drop_rename_and_invalidate_stop_every_segment() {
        for (OperationType type : new OperationType[] {OperationType.DROP, OperationType.RENAME,
                OperationType.DROP_DATABASE, OperationType.INVALIDATE}) {
            assertThat(EventRoute.of(type, null, null, FIRST_OF_TWO)).as(type.getValue()).isEqualTo(EventRoute.STOP);
        }
    }

    @Test
    void an_event_with_no_id_at_all_is_left_to_the_projector_to_refuse() {
        assertThat(EventRoute.of(OperationType.INSERT, new BsonDocument("name", new BsonString("x")), null, FIRST_OF_TWO))
                .isEqualTo(EventRoute.PROJECT);
    }
}
