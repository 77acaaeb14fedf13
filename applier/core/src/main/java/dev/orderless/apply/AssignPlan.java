package dev.orderless.apply;

import static dev.orderless.apply.WritePlan.Step.done;
import static dev.orderless.apply.WritePlan.Step.next;

import java.util.Optional;
import org.bson.BsonDocument;
import org.bson.BsonValue;

/**
 * assign(): a last-writer-wins register. Applies iff {@code seq > _floor} and {@code seq > _seq.<field>}.
 *
 * <ol>
 *   <li>Blind first write: {@code $set} the value and {@code _seq.<field>}, guarded as above, with upsert.
 *   <li>If it matched nothing: read and judge. Below the floor or the register's seq: superseded; equal:
 *       duplicate if the stored value is the same, else a seq collision; else (the upsert lost a
 *       first-insert race) write again.
 * </ol>
 */
final class AssignPlan implements WritePlan {
    private final Operation.Assign op;

    AssignPlan(Operation.Assign op) {
        this.op = op;
    }

    @Override
    public Optional<Write> first() {
        return Optional.of(write());
    }

    @Override
    public Optional<org.bson.conversions.Bson> supersededWhen() {
        return Optional.of(Queries.assignSuperseded(op.entity(), op.seq(), op.field()));
    }

    @Override
    public Step afterRead(Optional<BsonDocument> current) {
        if (current.isEmpty()) {
            return next(write());
        }
        BsonDocument doc = current.get();
        long seq = op.seq();
        Optional<Outcome> gone = Stored.atOrBelowFloor(doc, seq);
        if (gone.isPresent()) {
            return done(gone.get());
        }
        long existing = Stored.registerSeq(doc, op.field());
        if (existing < seq) {
            return next(write());
        }
        if (existing > seq) {
            return done(Outcome.SUPERSEDED);
        }
        BsonValue stored = doc.get(op.field());
        return done(op.value().equals(stored) ? Outcome.DUPLICATE : Outcome.SEQ_COLLISION);
    }

    private Write write() {
        return new Write("assign", Queries.assignFilter(op.entity(), op.seq(), op.field()),
                Queries.assignUpdate(op.seq(), op.field(), op.value()), true);
    }
}
