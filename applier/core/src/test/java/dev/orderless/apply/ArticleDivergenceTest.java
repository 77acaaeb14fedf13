package dev.orderless.apply;

import static com.mongodb.client.model.Filters.and;
import static com.mongodb.client.model.Filters.elemMatch;
import static com.mongodb.client.model.Filters.eq;
import static com.mongodb.client.model.Filters.lt;
import static com.mongodb.client.model.Filters.not;
import static com.mongodb.client.model.Filters.or;
import static com.mongodb.client.model.Updates.combine;
import static com.mongodb.client.model.Updates.pullByFilter;
import static com.mongodb.client.model.Updates.push;
import static dev.orderless.apply.Students.enroll;
import static dev.orderless.apply.Students.unenroll;
import static org.assertj.core.api.Assertions.assertThat;

import com.mongodb.MongoWriteException;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.MongoDatabase;
import com.mongodb.client.model.IndexOptions;
import com.mongodb.client.model.Indexes;
import com.mongodb.client.model.UpdateOptions;
import dev.orderless.oracle.ReferenceModel;
import dev.orderless.testing.MongoExtension;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Collectors;
import org.bson.BsonArray;
import org.bson.BsonDocument;
import org.bson.BsonInt32;
import org.bson.BsonInt64;
import org.bson.BsonString;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The applier article's own update statements (query on {@code student_id}, {@code $push}/{@code $pull}
 * with upsert, and its suggested follow-up update left out as it gives no statement for it), run on
 * named delivery histories beside the guarded applier and the oracle. The article goes wrong where its
 * guard does not match an existing student: the upsert then inserts a second document for the same
 * student, or, with a unique index on {@code student_id}, fails on every redelivery and the operation is
 * lost. That includes the article's own second walkthrough (unenroll before enroll): its stale insert is
 * said not to succeed, but with {@code upsert: true} a guard that matches nothing inserts. With the unique
 * index the state is right but the stale message fails with E11000 on every redelivery, so it can never
 * be acked. Ours matches the oracle on every history.
 */
@ExtendWith(MongoExtension.class)
class ArticleDivergenceTest {
    private static final List<String> REPORT = new ArrayList<>();

    static List<Arguments> histories() {
        return List.of(
                history("enroll then unenroll, in order", false,
                        enroll("s", 1001, "CS 101"), unenroll("s", 1002, "CS 101")),
                history("unenroll delivered before enroll (the article's own walkthrough)", true,
                        unenroll("s", 1002, "CS 101"), enroll("s", 1001, "CS 101")),
                history("enroll, unenroll, re-enroll, in order", false,
                        enroll("s", 1, "CS 101"), unenroll("s", 2, "CS 101"), enroll("s", 3, "CS 101")),
                history("enroll, unenroll, re-enroll delivered 1, 3, 2", true,
                        enroll("s", 1, "CS 101"), enroll("s", 3, "CS 101"), unenroll("s", 2, "CS 101")),
                history("stale enroll redelivered after the unenroll", true,
                        enroll("s", 1001, "CS 101"), unenroll("s", 1002, "CS 101"), enroll("s", 1001, "CS 101")),
                history("unenroll redelivered", true,
                        enroll("s", 1, "CS 101"), unenroll("s", 2, "CS 101"), unenroll("s", 2, "CS 101")),
                history("enroll redelivered", true,
                        enroll("s", 1, "CS 101"), enroll("s", 1, "CS 101")));
    }

    private static Arguments history(String name, boolean articleDiverges, Operation... delivered) {
        return Arguments.of(name, articleDiverges, List.of(delivered));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("histories")
    void the_article_diverges_where_its_guard_misses_and_ours_never_does(String name, boolean articleDiverges,
                                                                         List<Operation> delivered, MongoDatabase db) {
        Set<String> expected = new ReferenceModel(Students.SCHEMA).replay(delivered).get("s")
                .live().getOrDefault("classes", java.util.Map.of()).keySet();

        String plain = runArticle(db.getCollection("article_plain", BsonDocument.class), delivered, false, expected);
        String unique = runArticle(db.getCollection("article_unique", BsonDocument.class), delivered, true, expected);
        MongoCollection<BsonDocument> ours = db.getCollection("ours", BsonDocument.class);
        GuardedApplier applier = GuardedApplier.create(ours, Students.SCHEMA);
        delivered.forEach(applier::apply);
        EntityState oursState = EntityState.of(ours.find(eq("_id", "s")).first(), Students.SCHEMA);

        REPORT.add(String.format("%-48s | oracle %-10s | article %-36s | article+unique index %-40s | ours %s",
                name, expected, plain, unique, oursState.equals(new ReferenceModel(Students.SCHEMA)
                        .replay(delivered).get("s")) ? "same as oracle" : "DIVERGED"));

        assertThat(oursState).isEqualTo(new ReferenceModel(Students.SCHEMA).replay(delivered).get("s"));
        assertThat(ours.countDocuments()).isEqualTo(1);
        assertThat(!plain.equals("ok") || !unique.equals("ok")).as("article diverges on: " + name)
                .isEqualTo(articleDiverges);
    }

    @AfterAll
    static void printReport() {
        System.out.println("[article divergence] delivered history -> result of the article's statements vs ours");
        REPORT.forEach(line -> System.out.println("[article divergence] " + line));
    }

    /** Applies the article's statements; "ok" if the one student document matches the oracle's classes. */
    private static String runArticle(MongoCollection<BsonDocument> coll, List<Operation> delivered, boolean uniqueIndex,
                                     Set<String> expected) {
        if (uniqueIndex) {
            coll.createIndex(Indexes.ascending("student_id"), new IndexOptions().unique(true));
        }
        // the article's premise: the student document exists before any message
        coll.insertOne(new BsonDocument("student_id", new BsonInt32(1)).append("name", new BsonString("John Doe"))
                .append("classes", new BsonArray()).append("deleted_classes", new BsonArray()));
        List<String> failures = new ArrayList<>();
        for (Operation op : delivered) {
            boolean insert = op instanceof Operation.Add;
            String course = insert ? ((Operation.Add) op).element() : ((Operation.Remove) op).element();
            String to = insert ? "classes" : "deleted_classes";
            String from = insert ? "deleted_classes" : "classes";
            try {
                coll.updateOne(and(eq("student_id", 1),
                                not(elemMatch(to, eq("name", course))),
                                or(not(elemMatch(from, eq("name", course))),
                                        elemMatch(from, and(eq("name", course), lt("seq", op.seq()))))),
                        combine(push(to, new BsonDocument("name", new BsonString(course)).append("seq", new BsonInt64(op.seq()))),
                                pullByFilter(eq(from, new BsonDocument("name", new BsonString(course))))),
                        new UpdateOptions().upsert(true));
            } catch (MongoWriteException e) {
                failures.add("E11000 on seq " + op.seq());
            }
        }
        List<BsonDocument> docs = coll.find(eq("student_id", 1)).into(new ArrayList<>());
        if (docs.size() != 1) {
            return docs.size() + " documents for one student";
        }
        Set<String> enrolled = docs.get(0).getArray("classes").stream()
                .map(v -> v.asDocument().getString("name").getValue()).collect(Collectors.toCollection(TreeSet::new));
        if (!enrolled.equals(expected)) {
            return "enrolled in " + enrolled + (failures.isEmpty() ? "" : " after " + failures);
        }
        return failures.isEmpty() ? "ok" : "ok, but " + failures;
    }
}
