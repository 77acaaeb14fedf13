package dev.orderless.demo;

import com.mongodb.client.MongoCollection;
import dev.orderless.apply.EntityState;
import java.util.Map;
import java.util.TreeMap;
import org.bson.BsonArray;
import org.bson.BsonDocument;
import org.bson.BsonNull;
import org.bson.BsonValue;

/** Rosters as the view holds them, and as the student documents say they should be, to compare. */
public final class Rosters {
    private Rosters() {
    }

    /** class -&gt; student id -&gt; name and credits, from the class_rosters view. */
    public static Map<String, Map<String, BsonValue>> inView(MongoCollection<BsonDocument> rosters) {
        Map<String, Map<String, BsonValue>> view = new TreeMap<>();
        rosters.find().forEach(doc -> {
            Map<String, BsonValue> members = new TreeMap<>();
            EntityState.of(doc, Enrollment.ROSTER_SCHEMA).live().getOrDefault(Enrollment.ROSTER_STUDENTS, Map.of())
                    .forEach((id, entry) -> members.put(id, entry.attrs()));
            if (!members.isEmpty()) {
                view.put(doc.getString("_id").getValue(), members);
            }
        });
        return view;
    }

    /** class -&gt; student id -&gt; name and credits, derived from the student documents. */
    public static Map<String, Map<String, BsonValue>> fromStudents(MongoCollection<BsonDocument> students) {
        return fromStudents(students.find());
    }

    /** class -&gt; student id -&gt; name and credits, derived from these student documents. */
    public static Map<String, Map<String, BsonValue>> fromStudents(Iterable<BsonDocument> students) {
        Map<String, Map<String, BsonValue>> derived = new TreeMap<>();
        students.forEach(student -> {
            BsonDocument entry = new BsonDocument(Enrollment.NAME, student.get(Enrollment.NAME, BsonNull.VALUE))
                    .append(Enrollment.CREDITS, student.get(Enrollment.CREDITS, new org.bson.BsonInt64(0)));
            for (BsonValue course : student.getArray(Enrollment.CLASSES, new BsonArray())) {
                derived.computeIfAbsent(course.asDocument().getString("name").getValue(), c -> new TreeMap<>())
                        .put(student.getString("_id").getValue(), entry);
            }
        });
        return derived;
    }
}
