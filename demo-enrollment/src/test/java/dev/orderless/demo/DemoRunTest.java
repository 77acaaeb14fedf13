package dev.orderless.demo;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.orderless.InvalidConfigurationException;
import dev.orderless.backends.MongoBackend;
import dev.orderless.backends.RabbitBackend;
import dev.orderless.testing.MongoExtension;
import dev.orderless.testing.RabbitExtension;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

@ExtendWith({MongoExtension.class, RabbitExtension.class})
class DemoRunTest {

    @Test
    void a_shuffled_duplicated_poisoned_run_ends_converged_with_nothing_lost(MongoBackend mongo, RabbitBackend rabbit)
            throws Exception {
        String queue = RabbitExtension.uniqueQueue("demo");
        DemoOptions options = DemoOptions.parse("run", "--ops", "3000", "--students", "80", "--classes", "8",
                "--consumers", "4", "--shuffle", "--duplicate-rate", "0.2", "--poison", "9", "--seed", "11",
                "--mongo", mongo.connectionString(), "--rabbit", rabbit.uri().toString(),
                "--database", MongoBackend.freshDatabaseName("demo"), "--queue", queue);
        ByteArrayOutputStream captured = new ByteArrayOutputStream();

        int exit;
        try (Wiring wiring = new Wiring(options)) {
            exit = new DemoRun(wiring, new PrintStream(captured, true, StandardCharsets.UTF_8)).run();
            new org.springframework.amqp.rabbit.core.RabbitAdmin(wiring.rabbit).deleteQueue(queue);
            new org.springframework.amqp.rabbit.core.RabbitAdmin(wiring.rabbit).deleteQueue(queue + ".dlq");
        }

        String output = captured.toString(StandardCharsets.UTF_8);
        String result = output.lines().filter(l -> l.startsWith("RESULT ")).findFirst().orElseThrow();
        System.out.println("[demo] " + result);
        assertThat(result).contains("converged=true", "diverged=0", "dead_lettered=9", "lost=0",
                "rosters_consistent=true");
        assertThat(exit).isZero();
    }

    @Test
    void a_bad_option_fails_saying_what_to_change() {
        assertThatThrownBy(() -> DemoOptions.parse("run", "--duplicate-rate", "1.5"))
                .isInstanceOf(InvalidConfigurationException.class)
                .hasMessage("--duplicate-rate must be between 0 and 1, was 1.5");
        assertThatThrownBy(() -> DemoOptions.parse("run", "--consumers", "many"))
                .hasMessage("--consumers must be a whole number, was 'many'");
        assertThatThrownBy(() -> DemoOptions.parse("serve")).hasMessageContaining("unknown command 'serve'");
        assertThatThrownBy(() -> DemoOptions.parse("--fast")).hasMessageContaining("unknown option '--fast'");
        assertThat(Main.run("run", "--ops", "-1")).isEqualTo(2);
    }
}
