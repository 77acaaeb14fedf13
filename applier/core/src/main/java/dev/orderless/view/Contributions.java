package dev.orderless.view;

import static com.mongodb.client.model.Filters.eq;
import static com.mongodb.client.model.Filters.or;

import dev.orderless.apply.CollectionSchema;
import dev.orderless.apply.EntityState;
import dev.orderless.apply.GuardedApplier;
import dev.orderless.apply.Operation;
import dev.orderless.apply.SetField;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.bson.BsonDocument;
import org.bson.BsonNull;
import org.bson.conversions.Bson;

/**
 * What one source document contributed to a view, read from the view itself, and the operations that
 * take it back when the source is hard-deleted. The {@link ProjectionContract} makes the view its own
 * ledger: every entry a source writes is keyed by the source's {@code _id}, so its contributions are
 * exactly the live elements whose key is that id, and the registers of the view document whose
 * {@code _id} it is (other sources' elements in that document are theirs, and stay).
 *
 * <ol>
 *   <li>Read every view document that holds a live element keyed by the source, or is the source's own:
 *       {@code {$or: [{_id: S}, {<set>.<key>: S} for each set of the view schema]}}. On a large view,
 *       index {@code <set>.<key>} so this is not a scan.
 *   <li>The delete's seq is one above the highest seq any of those entries carries (and above the
 *       highest version the feeder saw of the source): it supersedes all of them, and a late write from
 *       an older version can no longer bring one back.
 *   <li>A {@code remove} of the source's element from every view document that holds it live, and an
 *       {@code assign} of null to each register of the source's own view document; each a guarded apply
 *       like every other view write.
 * </ol>
 */
final class Contributions {
    private Contributions() {
    }

    static List<Operation> undo(GuardedApplier view, String source, long seenVersion) {
        CollectionSchema schema = view.schema();
        List<Bson> holders = new ArrayList<>();
        holders.add(eq("_id", source));
        for (SetField set : schema.sets()) {
            holders.add(eq(set.field() + "." + set.key(), source));
        }
        List<EntityState> found = new ArrayList<>();
        for (BsonDocument doc : view.reads().find(or(holders))) {
            found.add(EntityState.of(doc, schema));
        }
        long highest = seenVersion;
        for (EntityState state : found) {
            for (Map<String, EntityState.Element> elements : state.live().values()) {
                EntityState.Element mine = elements.get(source);
                if (mine != null) {
                    highest = Math.max(highest, mine.seq());
                }
            }
            if (state.entity().equals(source)) {
                for (EntityState.Register register : state.registers().values()) {
                    highest = Math.max(highest, register.seq());
                }
            }
        }
        long seq = highest + 1;
        List<Operation> ops = new ArrayList<>();
        for (EntityState state : found) {
            state.live().forEach((field, elements) -> {
                if (elements.containsKey(source)) {
                    ops.add(Operation.remove(state.entity(), seq, field, source));
                }
            });
            if (state.entity().equals(source)) {
                state.registers().forEach((field, register) -> {
                    if (!register.value().isNull()) {
                        ops.add(Operation.assign(source, seq, field, BsonNull.VALUE));
                    }
                });
            }
        }
        return ops;
    }
}
