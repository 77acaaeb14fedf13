package dev.orderless.demo;

import static org.assertj.core.api.Assertions.assertThat;

import dev.orderless.backends.rabbit.RabbitBackend;
import dev.orderless.testing.rabbit.RabbitExtension;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/** The demo's command line as a newcomer meets it: help, bad values, no backends, unreachable backends. */
class CliTest {
    private static final List<String> COMMANDS = List.of("run", "consume", "view", "publish", "serve", "verify",
            "dead-letters", "outbox");

    @Test
    void help_on_the_jar_names_every_command_and_exits_0() {
        for (String help : List.of("--help", "-h", "help")) {
            CliRun run = CliRun.of(Map.of(), help);
            assertThat(run.exit()).as(help).isZero();
            assertThat(run.out()).as(help).contains(COMMANDS);
        }
    }

    @Test
    void every_command_answers_help_with_exit_0_and_its_options() {
        for (String command : COMMANDS) {
            CliRun run = CliRun.of(Map.of(), command, "--help");
            assertThat(run.exit()).as(command).isZero();
            assertThat(run.out()).as(command).contains("Usage: java -jar demo-enrollment.jar " + command, "--help");
        }
        assertThat(CliRun.of(Map.of(), "help", "verify").out()).contains("--wait=SECONDS");
    }

    @Test
    void the_options_are_listed_in_the_same_order_every_time() {
        assertThat(CliRun.of(Map.of(), "run", "--help").out()).isEqualTo(CliRun.of(Map.of(), "run", "--help").out());
        String help = CliRun.of(Map.of(), "run", "--help").out();
        assertThat(help.indexOf("\n      --ops=N")).isPositive().isLessThan(help.indexOf("\n      --students=N"))
                .isLessThan(help.indexOf("\n      --mongo=URI"));
    }

    @Test
    void a_bad_value_exits_2_with_one_line_naming_the_option() {
        assertOneLineError(CliRun.of(Map.of(), "run", "--duplicate-rate", "1.5"),
                "error: --duplicate-rate must be between 0 and 1, was 1.5");
        assertOneLineError(CliRun.of(Map.of(), "consume", "--consumers", "many"), "'--consumers'");
        assertOneLineError(CliRun.of(Map.of(), "run", "--ops", "-1"), "--ops must be between 0 and 10000000, was -1");
        assertOneLineError(CliRun.of(Map.of(), "--fast"), "'--fast'");
        assertOneLineError(CliRun.of(Map.of(), "bogus"), "unknown command 'bogus'");
        assertOneLineError(CliRun.of(Map.of(), "serve", "--mongo-port", "70000"), "port must be between 0 and 65535");
        assertOneLineError(CliRun.of(Map.of("MONGODB_URI", "mongodb://127.0.0.1:1"), "view", "--mongo",
                "not-a-uri"), "MongoDB URI is not a valid connection string");
        assertOneLineError(CliRun.of(Map.of(), "run", "--broker", "nats"), "'nats' is not a broker: rabbitmq or kafka");
        assertOneLineError(CliRun.of(Map.of(), "run", "--kafka", "localhost:9092"),
                "--kafka names a Kafka broker: add --broker kafka");
        assertOneLineError(CliRun.of(Map.of(), "run", "--broker", "kafka", "--rabbit",
                "amqp://localhost"), "--rabbit names a RabbitMQ, and --broker kafka uses none");
    }

    @Test
    void the_exit_code_is_0_when_done_and_2_for_an_option_or_a_command_it_does_not_take() {
        // 1, a failure: consume_with_an_unreachable_mongodb_fails_fast_in_one_line_naming_the_uri
        assertThat(CliRun.of(Map.of(), "--help").exit()).as("done").isZero();
        assertThat(CliRun.of(Map.of(), "run", "--opps", "10").exit()).as("an option it does not take").isEqualTo(2);
        assertThat(CliRun.of(Map.of(), "bogus").exit()).as("a command it does not have").isEqualTo(2);
    }

    @Test
    void commands_that_share_backends_refuse_without_uris_and_say_to_run_serve() {
        for (String command : List.of("consume", "publish", "verify", "view", "dead-letters")) {
            CliRun run = CliRun.of(Map.of(), command);
            assertOneLineError(run, "serve --detach");
            assertThat(run.err()).as(command).contains(command.equals("view") ? "MONGODB_URI" : "RABBITMQ_URI");
        }
        assertOneLineError(CliRun.of(Map.of("MONGODB_URI", "mongodb://127.0.0.1:1"), "consume"), "no RabbitMQ");
    }

    @Test
    void a_view_with_segments_out_of_range_is_refused_in_one_line_naming_the_range() {
        assertOneLineError(CliRun.of(Map.of("MONGODB_URI", "mongodb://127.0.0.1:1"), "view", "--segments", "0"),
                "--segments must be between 1 and 256, was 0");
    }

    @Test
    void compare_on_a_broker_it_does_not_know_fails_in_one_line_naming_the_option() {
        assertOneLineError(CliRun.of(Map.of(), "compare", "--broker", "nats"), "'compare --broker' is rabbitmq or kafka (as for run), was 'nats'");
    }

    @Test
    void compare_on_kafka_refuses_the_option_only_the_rabbitmq_plan_has() {
        assertOneLineError(CliRun.of(Map.of(), "compare", "--broker", "kafka", "--uniform"), "'compare --uniform' is for --broker rabbitmq");
    }

    @Test
    @ExtendWith(RabbitExtension.class)
    void consume_with_an_unreachable_mongodb_fails_fast_in_one_line_naming_the_uri(RabbitBackend rabbit) throws Exception {
        String mongo = "mongodb://127.0.0.1:" + closedPort();
        DemoProcess.Finished consume = DemoProcess.run(30, Map.of(), log("consume-unreachable"), "consume",
                "--mongo", mongo, "--rabbit", rabbit.uri().toString());
        System.out.printf("[cli] consume to a closed MongoDB port: exit %d after %d ms: %s%n", consume.exit(),
                consume.millis(), consume.lines());
        assertThat(consume.exit()).isEqualTo(1);
        assertThat(consume.lines()).hasSizeLessThanOrEqualTo(8).anyMatch(l -> l.startsWith("error: MongoDB at " + mongo));
        assertThat(consume.hasStackTrace()).isFalse();
    }

    @Test
    void run_with_an_unreachable_broker_fails_fast_in_one_line_naming_the_uri() throws Exception {
        String rabbit = "amqp://guest:guest@127.0.0.1:" + closedPort() + "/";
        DemoProcess.Finished run = DemoProcess.run(30, Map.of(), log("run-unreachable"), "run", "--rabbit", rabbit);
        System.out.printf("[cli] run to a closed AMQP port: exit %d after %d ms: %s%n", run.exit(), run.millis(),
                run.lines());
        assertThat(run.exit()).isEqualTo(1);
        assertThat(run.lines()).hasSizeLessThanOrEqualTo(8)
                .anyMatch(l -> l.startsWith("error: RabbitMQ at " + Uris.redacted(rabbit)));
        assertThat(run.hasStackTrace()).isFalse();
    }

    @Test
    @ExtendWith(dev.orderless.testing.MongoExtension.class)
    void amqp_1_0_against_a_broker_without_it_fails_in_one_line_saying_what_it_needs(
            dev.orderless.backends.MongoBackend mongo) throws Exception {
        // serve's embedded broker, the likeliest mistake (RabbitMQ 3 answers the same way: CI's RABBITMQ_URI may be 4)
        try (dev.orderless.backends.rabbit.EmbeddedQpid broker = dev.orderless.backends.rabbit.EmbeddedQpid.start(0)) {
            DemoProcess.Finished publish = DemoProcess.run(30, Map.of(), log("publish-amqp10-refused"), "publish",
                    "--protocol", "amqp-1.0", "--mongo", mongo.connectionString(), "--rabbit", broker.uri().toString(),
                    "--ops", "10");
            System.out.printf("[cli] publish --protocol amqp-1.0 to the embedded broker: exit %d: %s%n", publish.exit(),
                    publish.lines());
            assertThat(publish.exit()).isEqualTo(1);
            assertThat(publish.lines()).anyMatch(l -> l.startsWith("error: the AMQP broker at ")
                    && l.contains("needs RabbitMQ 4 or later")).noneMatch(l -> l.contains(" WARN "));
            assertThat(publish.hasStackTrace()).isFalse();
        }
    }

    @Test
    void a_misspelt_option_is_answered_with_the_one_meant() {
        assertOneLineError(CliRun.of(Map.of(), "run", "--opps", "10"), "did you mean --ops?");
    }

    @Test
    void a_dead_letter_kind_that_does_not_exist_is_refused_naming_the_kinds_and_a_grace_reads_as_people_write_it() {
        Map<String, String> env = Map.of("MONGODB_URI", "mongodb://127.0.0.1:1", "RABBITMQ_URI", "amqp://127.0.0.1:1");
        assertOneLineError(CliRun.of(env, "dead-letters", "replay", "--kind", "nonsense"),
                "unknown kind 'nonsense': one of [bad_input, beyond_horizon, delivery_limit, held_too_long, no_progress, oversized,"
                        + " too_large, unknown, unknown_field, unsupported_envelope]");
        assertOneLineError(CliRun.of(env, "dead-letters", "replay", "--grace", "1x"),
                "'1x' is not a duration: write 7d, 12h, 30m, 45s, or ISO-8601");
        assertThat(new Durations().convert("1d")).isEqualTo(java.time.Duration.ofDays(1));
        assertThat(new Durations().convert("90m")).isEqualTo(java.time.Duration.ofMinutes(90));
        assertThat(new Durations().convert("PT2H")).isEqualTo(java.time.Duration.ofHours(2));
    }

    @Test
    void the_commands_that_need_only_mongodb_offer_no_broker_options() {
        for (String command : List.of("view", "outbox")) {
            assertThat(CliRun.of(Map.of(), command, "--help").out()).as(command).contains("--mongo=URI")
                    .doesNotContain("--rabbit").contains("Needs only MongoDB");
        }
    }

    @Test
    @ExtendWith({RabbitExtension.class, dev.orderless.testing.MongoExtension.class})
    void a_wrong_password_or_virtual_host_is_named_as_such_not_as_unreachable(RabbitBackend rabbit,
                                                                               dev.orderless.backends.MongoBackend mongo) {
        java.net.URI real = rabbit.uri();
        String base = "amqp://" + real.getRawUserInfo().split(":")[0] + ":%s@" + real.getHost() + ":" + real.getPort();
        Map<String, String> env = Map.of("MONGODB_URI", mongo.connectionString());

        CliRun password = CliRun.of(env, "consume", "--rabbit", String.format(base, "wrong") + real.getRawPath());
        assertOneLineError(password, "refused the login");
        assertThat(password.err()).contains("check the user name and password").doesNotContain("wrong@");
        CliRun vhost = CliRun.of(env, "consume", "--rabbit", String.format(base, real.getRawUserInfo().split(":")[1])
                + "/no-such-vhost");
        assertOneLineError(vhost, "refused the virtual host");
        assertThat(vhost.err()).contains("%2F");
    }

    @Test
    void a_password_never_appears_in_a_printed_uri() {
        assertThat(Uris.redacted("amqp://app:s3cret@rabbit:5672/%2F")).isEqualTo("amqp://app:***@rabbit:5672/%2F");
        assertThat(Uris.redacted("amqp://app:se@cret@rabbit:5672/")).isEqualTo("amqp://app:***@rabbit:5672/");
        assertThat(Uris.redacted("mongodb://127.0.0.1:27017")).isEqualTo("mongodb://127.0.0.1:27017");
    }

    @Test
    void serve_with_its_console_on_a_busy_port_exits_2_naming_console_port_before_starting_anything() throws Exception {
        try (ServerSocket busy = new ServerSocket(0, 1, java.net.InetAddress.getByName("127.0.0.1"))) {
            CliRun serve = CliRun.of(Map.of(), "serve", "--console", "--console-port", String.valueOf(busy.getLocalPort()),
                    "--mongo-port", "0", "--amqp-port", "0");

            assertOneLineError(serve, "choose a free one with --console-port");
            assertThat(serve.out()).as("no export lines for a serve that did not start").isEmpty();
        }
    }

    private static void assertOneLineError(CliRun run, String expected) {
        assertThat(run.exit()).as(run.err()).isEqualTo(2);
        assertThat(run.errLines()).as(run.err()).hasSize(1);
        assertThat(run.errLines().get(0)).startsWith("error: ").contains(expected);
    }

    private static int closedPort() throws Exception {
        try (ServerSocket socket = new ServerSocket(0)) {
            return socket.getLocalPort();   // free now, and nothing listens on it once closed
        }
    }

    private static Path log(String name) throws Exception {
        return Files.createDirectories(Path.of("target", "cli")).resolve(name + ".log");
    }
}
