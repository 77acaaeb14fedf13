package dev.orderless.demo;

import dev.orderless.apply.CollectionSchema;
import dev.orderless.apply.SetField;

/**
 * The enrollment domain, named once: the students collection (the applier article's layout), the class
 * rosters view, and the queues.
 *
 * <pre>
 * students:      { _id: "student-1", name: "Ada", classes: [{name: "CS 101", seq}], deleted_classes: [...] }
 * class_rosters: { _id: "CS 101", students: [{id: "student-1", seq: &lt;student _v&gt;, name: "Ada"}], removed_students: [...] }
 * </pre>
 */
public final class Enrollment {
    public static final String DATABASE = "enrollment";
    public static final String STUDENTS = "students";
    public static final String ROSTERS = "class_rosters";
    /** Every action the consumers applied to the students, with {@code --history}. */
    public static final String STUDENTS_HISTORY = dev.orderless.history.History.collectionName(STUDENTS);
    public static final String QUEUE = "enrollment.ops";
    public static final String DEAD_LETTER_QUEUE = "enrollment.ops.dlq";
    public static final String OUTBOX = "outbox";
    public static final String COUNTERS = "seq_counters";
    public static final String ROSTER_LEASE = "view:" + ROSTERS;

    public static final String CLASSES = "classes";
    public static final String NAME = "name";
    public static final String ROSTER_STUDENTS = "students";

    public static final CollectionSchema STUDENT_SCHEMA = CollectionSchema.builder()
            .set(SetField.of(CLASSES, "name"))
            .register(NAME)
            .build();

    public static final CollectionSchema ROSTER_SCHEMA = CollectionSchema.builder()
            .set(new SetField(ROSTER_STUDENTS, "removed_students", "id"))
            .build();

    private Enrollment() {
    }
}
