package dev.orderless.demo;

import dev.orderless.apply.Operation;
import dev.orderless.view.ViewProjection;
import java.util.ArrayList;
import java.util.List;
import org.bson.BsonArray;
import org.bson.BsonDocument;
import org.bson.BsonNull;
import org.bson.BsonValue;

/**
 * A student document, as it is now, to the roster operations that agree with it: the student is in the
 * roster of every class they are enrolled in, with their current name and credits (so a rename, or another
 * class taken, reaches every roster),
 * and out of the roster of every class they left (a tombstone, or a whole-student delete, which turns
 * every enrollment into a tombstone). Every operation carries the student's {@code _v}, so a roster entry
 * only ever moves forward in the student's history.
 */
public final class ClassRosterProjection implements ViewProjection {

    @Override
    public List<Operation> project(BsonDocument student, long version) {
        String id = student.getString("_id").getValue();
        BsonValue name = student.get(Enrollment.NAME, BsonNull.VALUE);
        BsonValue credits = student.get(Enrollment.CREDITS, new org.bson.BsonInt64(0));
        List<Operation> ops = new ArrayList<>();
        for (BsonValue course : student.getArray(Enrollment.CLASSES, new BsonArray())) {
            ops.add(Operation.add(course.asDocument().getString("name").getValue(), version, Enrollment.ROSTER_STUDENTS,
                    id, new BsonDocument(Enrollment.NAME, name).append(Enrollment.CREDITS, credits)));
        }
        for (BsonValue course : student.getArray("deleted_" + Enrollment.CLASSES, new BsonArray())) {
            ops.add(Operation.remove(course.asDocument().getString("name").getValue(), version,
                    Enrollment.ROSTER_STUDENTS, id));
        }
        return ops;
    }
}
