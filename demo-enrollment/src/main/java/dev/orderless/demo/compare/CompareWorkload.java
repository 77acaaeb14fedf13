package dev.orderless.demo.compare;

import dev.orderless.apply.Operation;
import dev.orderless.demo.Enrollment;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import org.bson.BsonString;

/**
 * The actions every contestant applies, in the order a producer publishes them: enrollments, drops,
 * re-enrollments and renames, so that order matters (a drop applied before its enrollment, or an old name
 * after a new one, is a wrong state). Seqs increase with the publish order, so each student's actions are
 * published in seq order: any disorder is the consumers' doing.
 *
 * <ol>
 *   <li>Pick a student ({@link Keys}).
 *   <li>30 %: drop one of the classes the student is in (if none: rename instead); 30 %: rename; 40 %:
 *       enroll in one of 20 classes (again, if it was dropped: a re-enrollment).
 * </ol>
 *
 * @param keys     which students act
 * @param messages how many actions
 * @param seed     the random seed: the same seed, the same actions
 */
record CompareWorkload(Keys keys, int messages, long seed) {
    static final int CLASSES = 20;

    List<Operation> ops() {
        Random random = new Random(seed);
        Keys.Sampler students = keys.sampler(random);
        Map<Integer, Set<String>> enrolled = new HashMap<>();
        List<Operation> ops = new ArrayList<>(messages);
        for (int i = 0; i < messages; i++) {
            int student = students.next();
            String entity = "student-" + student;
            long seq = i + 1L;
            Set<String> classes = enrolled.computeIfAbsent(student, s -> new LinkedHashSet<>());
            double action = random.nextDouble();
            if (action < 0.3 && !classes.isEmpty()) {
                String dropped = classes.stream().skip(random.nextInt(classes.size())).findFirst().orElseThrow();
                classes.remove(dropped);
                ops.add(Operation.remove(entity, seq, Enrollment.CLASSES, dropped));
            } else if (action < 0.6) {
                ops.add(Operation.assign(entity, seq, Enrollment.NAME, new BsonString("name-" + seq)));
            } else {
                String course = "C" + random.nextInt(CLASSES);
                classes.add(course);
                ops.add(Operation.add(entity, seq, Enrollment.CLASSES, course));
            }
        }
        return ops;
    }

    String describe() {
        return keys.name() + " over " + keys.students() + " students";
    }
}
