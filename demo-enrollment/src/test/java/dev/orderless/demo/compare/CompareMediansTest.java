package dev.orderless.demo.compare;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import org.junit.jupiter.api.Test;

/** {@code compare --runs N} ends with medians: single runs on a shared machine vary by about a third. */
class CompareMediansTest {

    @Test
    void each_figure_of_the_compare_line_is_its_median_over_the_runs_and_divergences_are_summed() {
        String line = CompareReport.medianOf(List.of(
                "COMPARE zipf_8c_2ms_vs_partitioned_batched=0.15 zipf_msgs_per_round_trip=45.1 diverged_orderless=0 diverged_unguarded=30",
                "COMPARE zipf_8c_2ms_vs_partitioned_batched=0.22 zipf_msgs_per_round_trip=44.0 diverged_orderless=0 diverged_unguarded=41",
                "COMPARE zipf_8c_2ms_vs_partitioned_batched=0.18 zipf_msgs_per_round_trip=47.3 diverged_orderless=0 diverged_unguarded=12"));

        assertThat(line).isEqualTo("COMPARE zipf_8c_2ms_vs_partitioned_batched=0.18 zipf_msgs_per_round_trip=45.10"
                + " diverged_orderless=0 diverged_unguarded=83");
    }

    @Test
    void a_figure_one_run_lacks_has_no_median() {
        assertThat(CompareReport.medianOf(List.of("COMPARE scaleout_1to4_gain_orderless=2.25",
                "COMPARE scaleout_1to4_gain_orderless=NaN"))).isEqualTo("COMPARE scaleout_1to4_gain_orderless=NaN");
    }

    @Test
    void the_median_of_an_even_count_is_the_mean_of_the_middle_two() {
        assertThat(CompareReport.median(List.of(4.0, 1.0, 3.0, 2.0))).isEqualTo(2.5);
    }
}
