package dev.orderless.apply;

import com.mongodb.client.MongoCollection;
import com.mongodb.client.MongoDatabase;
import org.bson.BsonDocument;
import org.bson.BsonString;

/** The applier article's student documents, as a test fixture. */
final class Students {
    static final CollectionSchema SCHEMA = CollectionSchema.builder()
            .set(SetField.of("classes", "name"))
            .register("name")
            .counter("credits")
            .ranked("stage", "applied", "enrolled", "graduated", "withdrawn")
            .build();

    private Students() {
    }

    static MongoCollection<BsonDocument> collection(MongoDatabase db) {
        return db.getCollection("students", BsonDocument.class);
    }

    static Operation.Add enroll(String student, long seq, String course) {
        return Operation.add(student, seq, "classes", course);
    }

    static Operation.Add enroll(String student, long seq, String course, String title) {
        return Operation.add(student, seq, "classes", course, new BsonDocument("title", new BsonString(title)));
    }

    static Operation.Remove unenroll(String student, long seq, String course) {
        return Operation.remove(student, seq, "classes", course);
    }

    static Operation.Assign rename(String student, long seq, String name) {
        return Operation.assign(student, seq, "name", new BsonString(name));
    }

    static Operation.Increment credit(String student, long seq, long credits) {
        return Operation.increment(student, seq, "credits", credits);
    }

    static Operation.Assign stage(String student, long seq, String stage) {
        return Operation.assign(student, seq, "stage", new BsonString(stage));
    }

    static Operation.Delete leave(String student, long seq) {
        return Operation.delete(student, seq);
    }
}
