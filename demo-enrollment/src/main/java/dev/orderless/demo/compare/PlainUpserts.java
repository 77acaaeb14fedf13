package dev.orderless.demo.compare;

import static com.mongodb.client.model.Filters.eq;

import com.mongodb.client.MongoCollection;
import com.mongodb.client.model.BulkWriteOptions;
import com.mongodb.client.model.UpdateOneModel;
import com.mongodb.client.model.UpdateOptions;
import com.mongodb.client.model.Updates;
import com.mongodb.client.model.WriteModel;
import dev.orderless.apply.Operation;
import dev.orderless.demo.Enrollment;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.stream.Collectors;
import org.bson.BsonArray;
import org.bson.BsonDocument;
import org.bson.BsonValue;
import org.bson.conversions.Bson;

/**
 * How a team without orderless writes an action: a plain upsert ({@code $addToSet}, {@code $pull},
 * {@code $set}), right only if actions arrive in order. One message at a time, or one ordered bulk write per
 * batch (which keeps the batch's order).
 */
final class PlainUpserts {
    private static final UpdateOptions UPSERT = new UpdateOptions().upsert(true);
    private static final BulkWriteOptions ORDERED = new BulkWriteOptions().ordered(true);
    private static final BulkWriteOptions UNORDERED = new BulkWriteOptions().ordered(false);

    private PlainUpserts() {
    }

    static UpdateOneModel<BsonDocument> write(Operation op) {
        Bson update;
        if (op instanceof Operation.Add add) {
            update = Updates.addToSet(add.field(), add.element());
        } else if (op instanceof Operation.Remove remove) {
            update = Updates.pull(remove.field(), remove.element());
        } else if (op instanceof Operation.Assign assign) {
            update = Updates.set(assign.field(), assign.value());
        } else {
            throw new IllegalArgumentException("the comparison deletes no student: " + op);
        }
        return new UpdateOneModel<>(eq("_id", op.entity()), update, UPSERT);
    }

    static void apply(MongoCollection<BsonDocument> students, Operation op) {
        UpdateOneModel<BsonDocument> write = write(op);
        students.updateOne(write.getFilter(), write.getUpdate(), UPSERT);
    }

    /** One ordered bulk write: the batch's order is kept. */
    static void applyOrdered(MongoCollection<BsonDocument> students, List<Operation> ops) {
        students.bulkWrite(ops.stream().map(PlainUpserts::write).map(w -> (WriteModel<BsonDocument>) w).toList(), ORDERED);
    }

    /** One unordered bulk write, no guard: how fast MongoDB takes these writes at all. */
    static void applyUnordered(MongoCollection<BsonDocument> students, List<Operation> ops) {
        students.bulkWrite(ops.stream().map(PlainUpserts::write).map(w -> (WriteModel<BsonDocument>) w).toList(), UNORDERED);
    }

    /** What a plain document says: the student's classes and name, to compare with the oracle. */
    record Plain(Set<String> classes, Optional<BsonValue> name) {
        static Plain of(BsonDocument doc) {
            BsonArray classes = doc.getArray(Enrollment.CLASSES, new BsonArray());
            return new Plain(classes.stream().map(v -> v.asString().getValue()).collect(Collectors.toSet()),
                    Optional.ofNullable(doc.get(Enrollment.NAME)));
        }

        static Plain of(dev.orderless.apply.EntityState state) {
            Map<String, ?> live = state.live().getOrDefault(Enrollment.CLASSES, Map.of());
            return new Plain(Set.copyOf(live.keySet()),
                    Optional.ofNullable(state.registers().get(Enrollment.NAME)).map(r -> r.value()));
        }
    }
}
