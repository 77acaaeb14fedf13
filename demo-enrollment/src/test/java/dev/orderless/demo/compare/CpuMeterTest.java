package dev.orderless.demo.compare;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class CpuMeterTest {
    private final Map<Long, Long> live = new HashMap<>();
    private final CpuMeter meter = new CpuMeter(() -> Map.copyOf(live));

    @Test
    void counts_what_each_thread_spent_after_the_start_and_not_before() {
        live.put(1L, 500L);
        live.put(2L, 1_000L);
        meter.start();
        live.put(1L, 800L);
        live.put(2L, 1_100L);
        meter.sample();

        assertThat(meter.nanos()).isEqualTo(300 + 100);
    }

    @Test
    void counts_a_thread_born_after_the_start_from_zero() {
        meter.start();
        live.put(7L, 250L);
        meter.sample();

        assertThat(meter.nanos()).isEqualTo(250);
    }

    @Test
    void keeps_the_last_sample_of_a_thread_that_ended() {
        live.put(1L, 0L);
        meter.start();
        live.put(1L, 400L);
        meter.sample();
        live.remove(1L);   // ended: the JVM no longer reports it
        live.put(2L, 50L);
        meter.sample();

        assertThat(meter.nanos()).isEqualTo(400 + 50);
    }

    @Test
    void per_message_is_the_cpu_over_the_messages_in_microseconds() {
        meter.start();
        live.put(3L, 6_000_000L);
        meter.sample();

        assertThat(meter.per(2_000).micros()).isEqualTo(3.0);
        assertThat(CpuPerMessage.NONE.micros()).isNaN();
    }

    @Test
    void a_negative_figure_is_refused_naming_it() {
        assertThatThrownBy(() -> new CpuPerMessage(-1, 10)).hasMessageContaining("cpuNanos");
        assertThatThrownBy(() -> new CpuPerMessage(10, -1)).hasMessageContaining("messages");
    }

    @Test
    void the_jvm_meter_counts_the_threads_of_its_groups_and_no_other() throws Exception {
        ThreadGroup measured = new ThreadGroup("measured");
        CpuMeter jvm = CpuMeter.ofGroups(() -> List.of(measured));
        jvm.start();
        java.util.concurrent.CountDownLatch done = new java.util.concurrent.CountDownLatch(1);
        java.util.concurrent.CountDownLatch sampled = new java.util.concurrent.CountDownLatch(1);
        Thread busy = new Thread(measured, () -> {
            long sum = 0;
            for (int i = 0; i < 20_000_000; i++) {
                sum += Integer.toString(i).length();
            }
            assertThat(sum).isPositive();
            done.countDown();
            try {
                sampled.await();   // alive until sampled: a thread's CPU is read while it lives
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        });
        busy.start();
        done.await();
        jvm.sample();
        sampled.countDown();
        busy.join();
        long measuredNanos = jvm.nanos();

        CpuMeter none = CpuMeter.ofGroups(() -> List.of(new ThreadGroup("empty")));
        none.start();
        none.sample();

        assertThat(measuredNanos).isPositive();
        assertThat(none.nanos()).isZero();
    }

    @Test
    void what_runs_within_a_group_starts_its_threads_in_it_and_its_failure_is_rethrown() throws Exception {
        ThreadGroup group = new ThreadGroup("process-7");
        java.util.concurrent.atomic.AtomicReference<ThreadGroup> seen = new java.util.concurrent.atomic.AtomicReference<>();
        Thread child = CpuMeter.within(group, () -> {
            Thread started = new Thread(() -> seen.set(Thread.currentThread().getThreadGroup()));
            started.start();
            return started;
        });
        child.join();

        assertThat(seen.get()).isSameAs(group);
        assertThatThrownBy(() -> CpuMeter.within(group, () -> {
            throw new java.io.IOException("no broker");
        })).hasMessageContaining("process-7").hasMessageContaining("no broker");
    }
}
