package dev.orderless.apply;

import static dev.orderless.apply.BulkVerdicts.Kind.COUNTED;
import static dev.orderless.apply.BulkVerdicts.Kind.PROBE;
import static dev.orderless.apply.BulkVerdicts.Kind.WRITE;
import static dev.orderless.apply.BulkVerdicts.Result.FAILED;
import static dev.orderless.apply.BulkVerdicts.Result.INSERTED;
import static dev.orderless.apply.BulkVerdicts.Result.MISSED;
import static dev.orderless.apply.BulkVerdicts.Result.OK;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.orderless.apply.BulkVerdicts.Statement;
import dev.orderless.apply.BulkVerdicts.Verdict;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class BulkVerdictsTest {

    @Test
    void a_write_that_matched_or_inserted_applies_its_op_whatever_its_other_statements_say() {
        Map<Integer, Verdict> verdicts = BulkVerdicts.of(
                List.of(new Statement(0, WRITE), new Statement(0, WRITE), new Statement(0, PROBE),
                        new Statement(1, WRITE), new Statement(1, WRITE), new Statement(1, PROBE)),
                List.of(MISSED, OK, MISSED, INSERTED, FAILED, OK), 2);

        assertThat(verdicts).containsEntry(0, Verdict.APPLIED).containsEntry(1, Verdict.APPLIED);
    }

    @Test
    void an_op_whose_writes_missed_and_whose_probe_matched_is_superseded() {
        assertThat(BulkVerdicts.of(List.of(new Statement(4, WRITE), new Statement(4, WRITE), new Statement(4, PROBE)),
                List.of(MISSED, MISSED, OK), 1)).containsExactly(Map.entry(4, Verdict.SUPERSEDED));
    }

    @Test
    void a_probe_that_failed_tells_nothing_whatever_its_error() {
        assertThat(BulkVerdicts.of(List.of(new Statement(0, WRITE), new Statement(0, PROBE)), List.of(MISSED, MISSED), 0))
                .containsExactly(Map.entry(0, Verdict.MISSED));
    }

    @Test
    void a_write_failing_for_its_own_reason_sends_its_op_alone_unless_the_probe_settled_it() {
        Map<Integer, Verdict> verdicts = BulkVerdicts.of(
                List.of(new Statement(0, WRITE), new Statement(0, WRITE), new Statement(1, WRITE), new Statement(1, PROBE)),
                List.of(FAILED, MISSED, FAILED, OK), 1);

        assertThat(verdicts).containsEntry(0, Verdict.OWN_ERROR).containsEntry(1, Verdict.SUPERSEDED);
    }

    @Test
    void the_compare_and_set_applied_where_the_command_matched_more_than_its_other_statements() {
        List<Statement> statements = List.of(new Statement(0, WRITE), new Statement(1, PROBE), new Statement(2, COUNTED),
                new Statement(3, WRITE));
        List<BulkVerdicts.Result> results = List.of(OK, OK, OK, INSERTED);   // an insert is no match

        assertThat(BulkVerdicts.of(statements, results, 3)).containsEntry(2, Verdict.APPLIED);
        assertThat(BulkVerdicts.of(statements, results, 2)).containsEntry(2, Verdict.MISSED);
    }

    @Test
    void a_compare_and_set_with_its_own_error_is_applied_alone() {
        assertThat(BulkVerdicts.of(List.of(new Statement(0, COUNTED)), List.of(FAILED), 0))
                .containsExactly(Map.entry(0, Verdict.OWN_ERROR));
    }

    @Test
    void two_compare_and_sets_in_one_command_are_refused_as_a_count_cannot_say_whose() {
        assertThatThrownBy(() -> BulkVerdicts.of(List.of(new Statement(0, COUNTED), new Statement(1, COUNTED)),
                List.of(OK, OK), 1)).isInstanceOf(IllegalArgumentException.class).hasMessageContaining("ops 0 and 1");
    }

    @Test
    void verdicts_come_in_the_order_of_each_ops_first_statement() {
        assertThat(BulkVerdicts.of(List.of(new Statement(7, WRITE), new Statement(3, WRITE), new Statement(7, PROBE)),
                List.of(MISSED, OK, OK), 2).keySet()).containsExactly(7, 3);
    }
}
