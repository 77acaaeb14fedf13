package dev.orderless.testing.chaos;

import static org.assertj.core.api.Assertions.assertThat;

import dev.orderless.apply.EntityState;
import dev.orderless.apply.Operation;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.bson.BsonDocument;
import org.bson.BsonInt32;
import org.bson.BsonString;
import org.junit.jupiter.api.Test;

/** How a counterexample and a run's result read: expected and stored in one format, and what differs in words. */
class CounterexampleTest {

    @Test
    void a_delete_the_consumer_missed_reads_expected_deleted_at_its_seq_and_stored_not_deleted() {
        EntityState expected = new EntityState("o-1", 28, Map.of(), Map.of(), Map.of());

        String printed = printed(new Counterexample(List.of(Operation.delete("o-1", 28)),
                List.of("{\"entity\":\"o-1\",\"seq\":28,\"op\":\"delete\"}"), expected, Optional.empty(),
                Optional.empty(), 1, 0));

        assertThat(printed).contains("[chaos] expected (the reference model): {\"_id\": \"o-1\", \"_floor\": 28}\n")
                .contains("[chaos] stored:                         no document\n")
                .contains("[chaos] differs: expected deleted at seq 28 (floor 28), stored not deleted\n")
                .doesNotContain("floor=").doesNotContain("(none)");
    }

    @Test
    void expected_and_stored_are_each_one_line_of_json_of_the_same_shape_and_each_difference_is_named() {
        EntityState expected = new EntityState("order-10", 0,
                Map.of("lines", Map.of("sku-1", new EntityState.Element(3, new BsonDocument("quantity", new BsonInt32(2))))),
                Map.of(), Map.of("coupon", new EntityState.Register(15, new BsonString("SAVE70"))), Map.of("items", java.math.BigInteger.TWO));
        EntityState stored = new EntityState("t14~order-10", 0, Map.of(), Map.of("lines", Map.of("sku-1", 5L)),
                Map.of("coupon", new EntityState.Register(7, new BsonString("SAVE49"))), Map.of("items", java.math.BigInteger.valueOf(4)));

        String printed = printed(new Counterexample(List.of(), List.of(), expected,
                Optional.of(new BsonDocument("_id", new BsonString("t14~order-10"))), Optional.of(stored), 18, 14));

        String expectedLine = line(printed, "[chaos] expected (the reference model): ");
        String storedLine = line(printed, "[chaos] stored:                         ");
        assertThat(BsonDocument.parse(expectedLine)).isEqualTo(BsonDocument.parse("{\"_id\": \"order-10\","
                + " \"lines\": {\"sku-1\": {\"seq\": 3, \"quantity\": 2}}, \"coupon\": {\"value\": \"SAVE70\", \"seq\": 15},"
                + " \"items\": 2}"));
        assertThat(BsonDocument.parse(storedLine)).isEqualTo(BsonDocument.parse("{\"_id\": \"t14~order-10\","
                + " \"lines (removed)\": {\"sku-1\": 5}, \"coupon\": {\"value\": \"SAVE49\", \"seq\": 7}, \"items\": 4}"));
        assertThat(printed).contains("[chaos] differs: lines 'sku-1': expected live at seq 3 {\"quantity\": 2}, stored"
                        + " removed at seq 5\n")
                .contains("[chaos]          coupon: expected \"SAVE70\" at seq 15, stored \"SAVE49\" at seq 7\n")
                .contains("[chaos]          items: expected 2, stored 4\n")
                .doesNotContain("EntityState[").doesNotContain("BsonString{");
    }

    @Test
    void a_divergence_shrinking_could_not_reproduce_is_said_to_be_so_naming_the_entities_it_tried() {
        ChaosResult result = new ChaosResult("orders", 10, 10, List.of(), 2, 0, 0, 1.0, 7, Optional.empty(),
                List.of("o-1", "o-2"), List.of("o-1", "o-2"), Optional.empty());

        assertThat(printed(result)).contains("[chaos] not reproduced one message at a time: the messages of o-1, o-2"
                + " did not break").contains("no counterexample");
    }

    private static String printed(Counterexample counterexample) {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        counterexample.print(new PrintStream(bytes, true, StandardCharsets.UTF_8));
        return bytes.toString(StandardCharsets.UTF_8).replace(System.lineSeparator(), "\n");
    }

    private static String printed(ChaosResult result) {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        result.print(new PrintStream(bytes, true, StandardCharsets.UTF_8));
        return bytes.toString(StandardCharsets.UTF_8).replace(System.lineSeparator(), "\n");
    }

    private static String line(String printed, String prefix) {
        return printed.lines().filter(l -> l.startsWith(prefix)).findFirst().orElseThrow().substring(prefix.length());
    }
}
