package com.example.enrollment;

import com.mongodb.client.MongoDatabase;
import dev.orderless.apply.EntityState;
import dev.orderless.apply.GuardedApplier;
import dev.orderless.apply.Operation;
import dev.orderless.history.History;
import dev.orderless.history.Read;
import dev.orderless.history.RecordingApplier;
import dev.orderless.history.Version;
import java.util.List;
import org.bson.BsonDocument;
import org.bson.BsonString;

/** The history guide's examples, compiled and run by {@code ReadmeExamplesTest}. */
final class HistoryExamples {
    private HistoryExamples() {
    }

    static Read<EntityState> recordThenAsk(MongoDatabase db) {
        // tag::history[]
        History history = History.of(db.getCollection("students_history", BsonDocument.class), ReadmeExamples.STUDENTS);
        GuardedApplier applier = GuardedApplier.create(db.getCollection("students", BsonDocument.class),
                ReadmeExamples.STUDENTS);
        RecordingApplier recording = history.recording(applier);   // a consumer: OperationConsumer.builder(...).history(history)

        // the rename to Grace arrives first; the history orders them by seq
        recording.apply(Operation.assign("student-17", 1050, "name", new BsonString("Grace")));
        recording.apply(Operation.assign("student-17", 1044, "name", new BsonString("Ada")));

        List<Version> versions = history.versions("student-17").versions();   // seq 1044 (Ada), then 1050 (Grace)
        Read<EntityState> then = history.asOf("student-17", 1049);              // named Ada: the live document forgot
        // end::history[]
        return versions.size() == 2 ? then : new Read.Unknowable<>("expected two versions, found " + versions);
    }
}
