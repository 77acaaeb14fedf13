package dev.orderless.demo.compare;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.List;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.Test;

/** {@code compare --broker kafka}: what it runs and how its line is made, without a broker. */
class KafkaCompareTest {
    private static final TrialResult.Latency NONE = new TrialResult.Latency(0, Double.NaN, Double.NaN, Double.NaN, 0);

    private static List<TopicPartition> partitions(int... numbers) {
        return java.util.Arrays.stream(numbers).mapToObj(p -> new TopicPartition("t", p)).toList();
    }

    @Test
    void a_consumer_group_whose_first_member_still_holds_every_partition_has_not_joined() {
        assertThat(KafkaArena.joined(List.of(partitions(0, 1, 2, 3), partitions(), partitions(), partitions()), 4, 4))
                .isFalse();
        assertThat(KafkaArena.joined(List.of(partitions(0), partitions(1), partitions(2), partitions(3)), 4, 4)).isTrue();
    }

    @Test
    void eight_members_on_four_partitions_have_joined_once_four_of_them_hold_one_and_all_eight_are_in() {
        List<List<TopicPartition>> group = List.of(partitions(0), partitions(1), partitions(2), partitions(3),
                partitions(), partitions(), partitions(), partitions());
        List<List<TopicPartition>> share = List.of(partitions(0), partitions(1), partitions(2), partitions(3),
                partitions(0), partitions(1), partitions(2), partitions(3));

        assertThat(KafkaArena.joined(group, 8, 4)).isTrue();
        assertThat(KafkaArena.joined(share, 8, 4)).isTrue();
        assertThat(KafkaArena.joined(group.subList(0, 7), 8, 4)).isFalse();
    }

    @Test
    void the_quick_plan_sticks_a_handler_among_and_scales_out_to_twice_as_many_consumers_as_partitions() {
        KafkaPlan plan = KafkaPlan.quick();

        assertThat(plan.throughput()).extracting(KafkaTrial::consumers).containsExactly(4, 4, 4, 4, 1, 1, 8, 8);
        assertThat(plan.throughput()).allMatch(t -> t.partitions() == 4 && t.fault() == Fault.NONE);
        assertThat(plan.faults()).extracting(KafkaTrial::fault, KafkaTrial::consumers, KafkaTrial::partitions)
                .containsOnly(org.assertj.core.groups.Tuple.tuple(Fault.STUCK, 8, 4));
    }

    @Test
    void a_kafka_trial_has_no_kill_and_scales_out_by_two_drains_not_by_joining_one() {
        for (Fault fault : List.of(Fault.KILL, Fault.SCALE_OUT)) {
            assertThatThrownBy(() -> new KafkaTrial(KafkaContestant.SHARE_GROUP, ComparePlan.ZIPF, fault, 4, 4,
                    Duration.ofMillis(2))).isInstanceOf(IllegalArgumentException.class).hasMessageContaining("fault");
        }
    }

    private static KafkaTrialResult result(KafkaContestant contestant, CompareWorkload workload, Fault fault,
                                           int consumers, double perSecond, double unrelatedP99, double cpu) {
        KafkaTrial trial = new KafkaTrial(contestant, workload, fault, consumers, 4, Duration.ofMillis(2));
        TrialResult figures = new TrialResult(trial.analogue(), perSecond, 1, NONE, NONE,
                new TrialResult.Latency(100, 10, unrelatedP99, unrelatedP99, 0), 0, 0, 0, 50,
                new CpuPerMessage((long) (cpu * 1000), 1), CpuPerMessage.NONE);
        return new KafkaTrialResult(trial, figures);
    }

    @Test
    void the_compare_line_gives_the_share_group_over_the_consumer_group_so_that_above_one_is_the_share_groups_advantage() {
        KafkaReport report = new KafkaReport(KafkaPlan.quick(), List.of(
                result(KafkaContestant.CONSUMER_GROUP, ComparePlan.ZIPF, Fault.NONE, 4, 1000, 0, 60),
                result(KafkaContestant.SHARE_GROUP, ComparePlan.ZIPF, Fault.NONE, 4, 1500, 0, 90),
                result(KafkaContestant.CONSUMER_GROUP, ComparePlan.ZIPF, Fault.NONE, 1, 400, 0, 0),
                result(KafkaContestant.SHARE_GROUP, ComparePlan.ZIPF, Fault.NONE, 1, 300, 0, 0),
                result(KafkaContestant.CONSUMER_GROUP, ComparePlan.ZIPF, Fault.NONE, 8, 480, 0, 0),
                result(KafkaContestant.SHARE_GROUP, ComparePlan.ZIPF, Fault.NONE, 8, 900, 0, 0),
                result(KafkaContestant.CONSUMER_GROUP, ComparePlan.ZIPF, Fault.STUCK, 8, 200, 4000, 0),
                result(KafkaContestant.SHARE_GROUP, ComparePlan.ZIPF, Fault.STUCK, 8, 200, 40, 0)));

        assertThat(report.compareLine()).startsWith("COMPARE kafka_zipf_4c_2ms_share_over_group=1.50 ")
                .contains(" kafka_scaleout_1to8_gain_share_over_group=2.50 ", " kafka_scaleout_1to8_gain_share=3.00 ",
                        " kafka_scaleout_1to8_gain_group=1.20 ", " kafka_stuck_8c_unrelated_p99_group_over_share=100.0 ",
                        " kafka_zipf_cpu_us_per_msg_share=90.0 ", " kafka_zipf_cpu_us_per_msg_group=60.0 ")
                .contains(" kafka_uniform_4c_2ms_share_over_group=NaN ")   // not run: said, not made up
                .endsWith(" diverged_kafka_share=0 diverged_kafka_group=0");
    }

    @Test
    void runs_of_the_kafka_compare_end_with_each_figures_median() {
        KafkaReport slow = new KafkaReport(KafkaPlan.quick(), List.of(
                result(KafkaContestant.CONSUMER_GROUP, ComparePlan.ZIPF, Fault.NONE, 4, 1000, 0, 60),
                result(KafkaContestant.SHARE_GROUP, ComparePlan.ZIPF, Fault.NONE, 4, 500, 0, 90)));
        KafkaReport fast = new KafkaReport(KafkaPlan.quick(), List.of(
                result(KafkaContestant.CONSUMER_GROUP, ComparePlan.ZIPF, Fault.NONE, 4, 1000, 0, 60),
                result(KafkaContestant.SHARE_GROUP, ComparePlan.ZIPF, Fault.NONE, 4, 1500, 0, 90)));

        assertThat(KafkaReport.medianLine(List.of(slow, fast))).startsWith("COMPARE kafka_zipf_4c_2ms_share_over_group=1.00 ");
    }
}
