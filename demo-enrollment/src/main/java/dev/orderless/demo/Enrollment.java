package dev.orderless.demo;

import dev.orderless.apply.CollectionSchema;
import dev.orderless.apply.SetField;

/**
 * The enrollment domain, named once: the students collection (the applier article's layout), the class
 * rosters view, and the queues.
 *
 * <pre>
 * students:      { _id: "student-1", name: "Ada", classes: [{name: "CS 101", seq}], deleted_classes: [...],
 *                  credits: 7,              // a counter: + a class's credits on enroll, - on drop
 *                  status: "ENROLLED" }     // ranked: APPLIED &lt; ENROLLED &lt; GRADUATED, WITHDRAWN above all
 * class_rosters: { _id: "CS 101", students: [{id: "student-1", seq: &lt;student _v&gt;, name: "Ada", credits: 7}],
 *                  removed_students: [...] }
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
    /** A student's credits: the sum of the credits of the classes they are enrolled in, kept as a counter. */
    public static final String CREDITS = "credits";
    /** A student's status, a ranked register: it only moves forward, and a withdrawal stands. */
    public static final String STATUS = "status";
    public static final String APPLIED = "APPLIED";
    public static final String ENROLLED = "ENROLLED";
    public static final String GRADUATED = "GRADUATED";
    public static final String WITHDRAWN = "WITHDRAWN";
    public static final String ROSTER_STUDENTS = "students";

    public static final CollectionSchema STUDENT_SCHEMA = CollectionSchema.builder()
            .set(SetField.of(CLASSES, "name"))
            .register(NAME)
            .counter(CREDITS)
            .ranked(STATUS, APPLIED, ENROLLED, GRADUATED, WITHDRAWN)
            .build();

    public static final CollectionSchema ROSTER_SCHEMA = CollectionSchema.builder()
            .set(new SetField(ROSTER_STUDENTS, "removed_students", "id"))
            .build();

    /** The credits a class is worth: 3, 4 or 5, by its number. */
    public static int creditsOf(String course) {
        return 3 + Math.floorMod(course.hashCode(), 3);
    }

    private Enrollment() {
    }
}
