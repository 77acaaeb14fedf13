package dev.orderless.apply;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.mongodb.client.MongoCollection;
import com.mongodb.client.MongoDatabase;
import dev.orderless.InvalidConfigurationException;
import dev.orderless.InvalidInputException;
import dev.orderless.testing.MongoExtension;
import org.bson.BsonDocument;
import org.bson.BsonInt32;
import org.bson.BsonString;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** Only declared fields become update paths; everything else is bad input and writes nothing. */
@ExtendWith(MongoExtension.class)
class ValidationTest {
    private MongoCollection<BsonDocument> students;
    private GuardedApplier applier;

    @BeforeEach
    void setUp(MongoDatabase db) {
        students = Students.collection(db);
        applier = GuardedApplier.create(students, Students.SCHEMA);
    }

    @ParameterizedTest
    @ValueSource(strings = {"_seq", "_floor", "_gcFloor", "_v", "_id"})
    void an_internal_field_is_rejected_by_name(String field) {
        assertRejected(Operation.assign("s1", 1, field, new BsonInt32(1)), "'" + field + "' is reserved");
        assertRejected(Operation.add("s1", 1, field, "x"), "'" + field + "' is reserved");
    }

    @Test
    void a_field_starting_with_a_dollar_is_rejected() {
        assertRejected(Operation.assign("s1", 1, "$set", new BsonInt32(1)), "'$set' starts with '$'");
    }

    @Test
    void a_dotted_field_is_rejected() {
        assertRejected(Operation.assign("s1", 1, "name.first", new BsonString("Ada")), "'name.first' contains '.'");
        assertRejected(Operation.remove("s1", 1, "classes.0", "CS 101"), "'classes.0' contains '.'");
    }

    @Test
    void an_undeclared_field_is_rejected_naming_the_declared_ones() {
        assertRejected(Operation.add("s1", 1, "clubs", "chess"), "'clubs' is not a declared set field (declared: [classes])");
        assertRejected(Operation.assign("s1", 1, "age", new BsonInt32(9)), "'age' is not a declared register (declared: [name, stage])");
    }

    @Test
    void a_register_used_as_a_set_and_a_set_used_as_a_register_are_rejected() {
        assertRejected(Operation.add("s1", 1, "name", "x"), "'name' is a register, not a set: use assign");
        assertRejected(Operation.assign("s1", 1, "classes", new BsonString("x")), "'classes' is a set, not a register");
    }

    @Test
    void a_tombstone_array_is_not_a_field_an_operation_may_name() {
        assertRejected(Operation.add("s1", 1, "deleted_classes", "CS 101"), "'deleted_classes' is not a declared set field");
    }

    @Test
    void attributes_that_would_clash_with_the_entry_are_rejected() {
        assertRejected(Operation.add("s1", 1, "classes", "CS 101", new BsonDocument("seq", new BsonInt32(9))),
                "attribute 'seq' is reserved inside array entries");
        assertRejected(Operation.add("s1", 1, "classes", "CS 101", new BsonDocument("name", new BsonString("x"))),
                "attribute 'name' is the element key of 'classes'");
        assertRejected(Operation.add("s1", 1, "classes", "CS 101", new BsonDocument("$inc", new BsonInt32(1))),
                "attribute '$inc' starts with '$'");
    }

    @Test
    void a_missing_or_non_positive_seq_is_rejected_when_the_operation_is_made() {
        assertThatThrownBy(() -> Operation.delete("s1", 0)).isInstanceOf(InvalidInputException.class)
                .hasMessageContaining("seq must be positive, was 0");
        assertThatThrownBy(() -> Operation.add("s1", -3, "classes", "x")).isInstanceOf(InvalidInputException.class)
                .hasMessageContaining("seq must be positive, was -3");
        assertThatThrownBy(() -> Operation.add("", 3, "classes", "x")).isInstanceOf(InvalidInputException.class)
                .hasMessageContaining("entity is missing");
        assertThatThrownBy(() -> Operation.remove("s1", 3, "classes", "")).isInstanceOf(InvalidInputException.class)
                .hasMessageContaining("element is missing");
    }

    @Test
    void a_schema_that_declares_a_name_twice_fails_at_start_up() {
        assertThatThrownBy(() -> CollectionSchema.builder().set(SetField.of("classes", "name")).register("classes").build())
                .isInstanceOf(InvalidConfigurationException.class)
                .hasMessageContaining("field 'classes' is declared twice");
    }

    @Test
    void a_schema_that_declares_a_reserved_or_unsafe_name_fails_at_start_up() {
        assertThatThrownBy(() -> CollectionSchema.builder().register("_v").build())
                .isInstanceOf(InvalidConfigurationException.class).hasMessageContaining("'_v' is reserved");
        assertThatThrownBy(() -> SetField.of("a.b", "name"))
                .isInstanceOf(InvalidConfigurationException.class).hasMessageContaining("'a.b' contains '.'");
        assertThatThrownBy(() -> new SetField("classes", "classes", "name"))
                .isInstanceOf(InvalidConfigurationException.class).hasMessageContaining("needs a name of its own");
        assertThatThrownBy(() -> SetField.of("classes", "seq"))
                .isInstanceOf(InvalidConfigurationException.class).hasMessageContaining("'seq' is reserved");
    }

    @Test
    void a_lone_surrogate_anywhere_is_rejected_because_it_would_not_read_back_equal() {
        assertRejected(Operation.assign("s1", 1, "name", new BsonString("Ad\uD800a")), "lone UTF-16 surrogate");
        assertThatThrownBy(() -> Operation.add("s1", 1, "classes", "CS \uDC00101")).isInstanceOf(InvalidInputException.class)
                .hasMessageContaining("element contains a lone UTF-16 surrogate");
        assertRejected(Operation.add("s1", 1, "classes", "CS 101",
                new BsonDocument("t\uD800", new BsonInt32(1))), "lone UTF-16 surrogate");
        assertThatThrownBy(() -> Operation.delete("s\uD8001", 1)).isInstanceOf(InvalidInputException.class)
                .hasMessageContaining("entity id contains a lone UTF-16 surrogate");
    }

    @Test
    void a_paired_surrogate_is_a_valid_character_and_is_stored() {
        assertThat(applier.apply(Operation.assign("s1", 1, "name", new BsonString("Ada \uD83D\uDE00"))))
                .isEqualTo(Outcome.APPLIED);
    }

    @Test
    void a_nested_name_with_a_dollar_a_dot_or_a_nul_is_rejected() {
        assertRejected(Operation.assign("s1", 1, "name", new BsonDocument("$where", new BsonInt32(1))),
                "nested name '$where' starts with '$'");
        assertRejected(Operation.add("s1", 1, "classes", "CS 101", new BsonDocument("meta",
                new BsonDocument("a.b", new BsonInt32(1)))), "nested name 'a.b' contains '.'");
        assertRejected(Operation.assign("s1", 1, "name", new BsonDocument("a\0b", new BsonInt32(1))),
                "nested name contains a NUL character");
    }

    @Test
    void a_value_nested_deeper_than_the_limit_is_rejected_and_one_at_the_limit_is_stored() {
        assertRejected(Operation.assign("s1", 1, "name", nested(StorableValues.MAX_DEPTH + 1)),
                "nested deeper than " + StorableValues.MAX_DEPTH + " levels");
        assertThat(applier.apply(Operation.assign("s1", 1, "name", nested(StorableValues.MAX_DEPTH))))
                .isEqualTo(Outcome.APPLIED);
    }

    @Test
    void an_unacknowledged_write_concern_is_refused_at_create() {
        assertThatThrownBy(() -> GuardedApplier.create(students.withWriteConcern(com.mongodb.WriteConcern.UNACKNOWLEDGED),
                Students.SCHEMA))
                .isInstanceOf(InvalidConfigurationException.class).hasMessageContaining("use w: 1 or w: majority");
    }

    private static BsonDocument nested(int depth) {
        BsonDocument value = new BsonDocument("leaf", new BsonInt32(1));
        for (int i = 1; i < depth; i++) {
            value = new BsonDocument("d", value);
        }
        return value;
    }

    private void assertRejected(Operation op, String expected) {
        assertThatThrownBy(() -> applier.apply(op))
                .isInstanceOf(InvalidInputException.class)
                .hasMessageContaining(expected)
                .hasMessageContaining("entity 's1'");
        assertThat(students.countDocuments()).as("nothing written").isZero();
    }
}
