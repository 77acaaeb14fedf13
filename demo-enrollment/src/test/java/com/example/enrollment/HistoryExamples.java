package com.example.enrollment;

import com.mongodb.client.MongoCollection;
import com.mongodb.client.MongoDatabase;
import dev.orderless.apply.EntityState;
import dev.orderless.apply.GuardedApplier;
import dev.orderless.apply.Operation;
import dev.orderless.history.History;
import dev.orderless.history.HistoryBaseline;
import dev.orderless.history.HistoryBaseline.Start;
import dev.orderless.history.Read;
import dev.orderless.history.RecordingApplier;
import dev.orderless.history.Version;
import dev.orderless.lease.LeaseOptions;
import dev.orderless.lease.MongoLeaseProvider;
import java.time.Duration;
import java.util.List;
import org.bson.BsonDocument;
import org.bson.BsonString;

/** The history guide's examples, compiled and run by {@code ReadmeExamplesTest}. */
final class HistoryExamples {
    private HistoryExamples() {
    }

    static Read<EntityState> recordThenAsk(MongoDatabase db) {
        // tag::history[]
        MongoCollection<BsonDocument> students = db.getCollection("students", BsonDocument.class);
        History history = History.of(db.getCollection("students_history", BsonDocument.class), ReadmeExamples.STUDENTS)
                .withLive(students);   // the history of students: each read checks the live document too
        history.beginBaseline(Start.DETECT);   // before the consumers: students is empty, nothing predates the history
        GuardedApplier applier = GuardedApplier.create(students, ReadmeExamples.STUDENTS);
        RecordingApplier recording = history.recording(applier);   // a consumer: OperationConsumer.builder(...).history(history)

        // the rename to Grace arrives first; the history orders them by seq
        recording.apply(Operation.assign("student-17", 1050, "name", new BsonString("Grace")));
        recording.apply(Operation.assign("student-17", 1044, "name", new BsonString("Ada")));

        List<Version> versions = history.versions("student-17").versions();   // seq 1044 (Ada), then 1050 (Grace)
        Read<EntityState> then = history.asOf("student-17", 1049);              // named Ada: the live document forgot
        // end::history[]
        return versions.size() == 2 ? then : new Read.Unknowable<>("expected two versions, found " + versions);
    }

    /** The documented step for a collection that had data before the history: the baseline, then a read. */
    static Read<EntityState> baselineThenAsk(MongoDatabase db, String owner) {
        GuardedApplier applier = GuardedApplier.create(db.getCollection("students", BsonDocument.class),
                ReadmeExamples.STUDENTS);
        applier.apply(Operation.add("student-17", 1040, "classes", "CS 101"));   // consumed before the history was on
        applier.apply(Operation.assign("student-17", 1044, "name", new BsonString("Ada")));

        // tag::history-baseline[]
        MongoCollection<BsonDocument> students = db.getCollection("students", BsonDocument.class);
        History history = History.of(db.getCollection("students_history", BsonDocument.class), ReadmeExamples.STUDENTS)
                .withLive(students);   // reads check the live document: Unknowable while it holds unrecorded state
        HistoryBaseline baseline = HistoryBaseline.create(history,
                MongoLeaseProvider.create(db.getCollection("leases", BsonDocument.class), LeaseOptions.ofDefaults()),
                owner, Duration.ofMinutes(1));
        history.beginBaseline(Start.DETECT);   // before the consumers: students has data, its history none: UNDER_WAY
        baseline.runIfDue();   // once across processes, beside the consumers; ask again until baseline.complete()

        history.recording(applier).apply(Operation.assign("student-17", 1050, "name", new BsonString("Grace")));
        Read<EntityState> now = history.asOf("student-17", 1050);      // CS 101, Grace: the live state and seq 1050
        Read<EntityState> before = history.asOf("student-17", 1043);   // Unknowable: below the baseline's horizon 1044
        // end::history-baseline[]
        return before instanceof Read.Unknowable<EntityState> && baseline.complete() ? now
                : new Read.Unknowable<>("expected Unknowable below the horizon, found " + before);
    }
}
