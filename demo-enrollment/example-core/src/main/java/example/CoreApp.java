package example;

import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.MongoCollection;
import dev.orderless.apply.CollectionSchema;
import dev.orderless.apply.GuardedApplier;
import dev.orderless.apply.Operation;
import dev.orderless.apply.Outcome;
import dev.orderless.apply.SetField;
import java.util.List;
import org.bson.BsonDocument;
import org.bson.BsonString;

/** The guarded apply with nothing but orderless-core and the MongoDB driver on the class path. */
public final class CoreApp {
    public static void main(String[] args) {
        if (System.getenv("MONGODB_URI") == null) {
            System.err.println("error: set MONGODB_URI (the demo's 'serve --detach' prints it)");
            System.exit(2);
        }
        // tag::core[]
        try (MongoClient mongo = MongoClients.create(System.getenv("MONGODB_URI"))) {
            MongoCollection<BsonDocument> students = mongo.getDatabase("example_core")
                    .getCollection("students", BsonDocument.class);
            students.drop();
            CollectionSchema schema = CollectionSchema.builder().set(SetField.of("classes", "name"))
                    .register("name").build();
            GuardedApplier applier = GuardedApplier.create(students, schema);

            // the unenroll arrives before the enroll, and the enroll twice: the student ends unenrolled
            List<Outcome> outcomes = List.of(
                    applier.apply(Operation.remove("student-17", 2, "classes", "CS 101")),
                    applier.apply(Operation.add("student-17", 1, "classes", "CS 101")),
                    applier.apply(Operation.add("student-17", 1, "classes", "CS 101")),
                    applier.apply(Operation.assign("student-17", 3, "name", new BsonString("Ada"))));
            System.out.println("OUTCOMES " + outcomes);   // [APPLIED, SUPERSEDED, SUPERSEDED, APPLIED]
            System.out.println("STUDENT " + students.find().first().toJson());
        }
        // end::core[]
    }
}
