package dev.orderless.review;

import static com.mongodb.client.model.Filters.eq;
import static org.assertj.core.api.Assertions.assertThat;

import com.mongodb.client.MongoCollection;
import com.mongodb.client.MongoDatabase;
import dev.orderless.apply.ApplierOptions;
import dev.orderless.apply.CollectionSchema;
import dev.orderless.apply.EntityState;
import dev.orderless.apply.GuardedApplier;
import dev.orderless.apply.Operation;
import dev.orderless.apply.Outcome;
import dev.orderless.apply.TombstoneCompactor;
import dev.orderless.testing.ManualClock;
import dev.orderless.testing.MongoExtension;
import java.math.BigInteger;
import java.time.Duration;
import java.util.List;
import org.bson.BsonDocument;
import org.bson.BsonString;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

@ExtendWith(MongoExtension.class)
class ReviewCounterEdgesTest {
    private static final CollectionSchema SCHEMA = CollectionSchema.builder().counter("cents").build();

    private static void show(String what, MongoCollection<BsonDocument> c, String id) {
        System.out.println("DOC " + what + ": " + c.find(eq("_id", id)).first().toJson());
    }

    @Test
    void int32_counter_written_by_another_program(MongoDatabase db) {
        MongoCollection<BsonDocument> c = db.getCollection("i32", BsonDocument.class);
        GuardedApplier applier = GuardedApplier.create(c, SCHEMA);
        c.insertOne(BsonDocument.parse("{_id: 'e', cents: {$numberInt: '2147483600'}, _v: {$numberLong: '1'}}"));
        System.out.println("OUT " + applier.apply(Operation.increment("e", 1, "cents", 100)));
        show("int32", c, "e");
        System.out.println("OUT " + applier.apply(Operation.increment("e", 2, "cents", Long.MAX_VALUE)));
        show("int32 past", c, "e");
    }

    @Test
    void decimal_counter_written_by_another_program(MongoDatabase db) {
        MongoCollection<BsonDocument> c = db.getCollection("dec", BsonDocument.class);
        GuardedApplier applier = GuardedApplier.create(c, SCHEMA);
        c.insertOne(BsonDocument.parse("{_id: 'e', cents: {$numberDecimal: '5.00'}, _v: {$numberLong: '1'}}"));
        System.out.println("OUT " + applier.apply(Operation.increment("e", 1, "cents", 1)));
        show("dec", c, "e");
        c.insertOne(BsonDocument.parse("{_id: 'f', cents: {$numberDecimal: '1E+40'}, _v: {$numberLong: '1'}}"));
        try {
            System.out.println("OUT " + applier.apply(Operation.increment("f", 1, "cents", 1)));
        } catch (RuntimeException e) {
            System.out.println("OUT f " + e);
        }
    }

    @Test
    void issue_delete_order(MongoDatabase db) {
        MongoCollection<BsonDocument> c = db.getCollection("del", BsonDocument.class);
        GuardedApplier applier = GuardedApplier.create(c, SCHEMA);
        long max = Long.MAX_VALUE;
        for (Operation op : List.of(Operation.increment("e", 10, "cents", max), Operation.increment("e", 2, "cents", -max),
                Operation.increment("e", 11, "cents", max), Operation.increment("e", 12, "cents", -max),
                Operation.delete("e", 5))) {
            System.out.println("OUT " + op + " " + applier.apply(op));
            show("del", c, "e");
        }
    }

    @Test
    void previous_representation_with_many_pending_and_a_fold(MongoDatabase db) {
        MongoCollection<BsonDocument> c = db.getCollection("old", BsonDocument.class);
        ManualClock clock = new ManualClock();
        GuardedApplier applier = GuardedApplier.create(c, SCHEMA, ApplierOptions.ofDefaults().withClock(clock));
        StringBuilder inc = new StringBuilder();
        long sum = 0;
        for (int seq = 11; seq <= 260; seq++) {
            if (seq == 100 || seq == 99) continue;   // a gap
            inc.append(inc.length() == 0 ? "" : ",").append("{seq: {$numberLong: '" + seq + "'}, d: {$numberLong: '2'}, at: {$date: 0}}");
            sum += 2;
        }
        sum += 1000;   // folded below 10
        c.insertOne(BsonDocument.parse("{_id: 'e', cents: {$numberLong: '" + sum + "'}, _inc: {cents: [" + inc
                + "]}, _incFloor: {cents: {$numberLong: '10'}}, _floor: {$numberLong: '0'}, _gcFloor: {$numberLong: '0'}, _v: {$numberLong: '300'}}"));
        System.out.println("OUT 99 " + applier.apply(Operation.increment("e", 99, "cents", 5)));
        System.out.println("OUT 50 dup " + applier.apply(Operation.increment("e", 50, "cents", 2)));
        System.out.println("OUT 5 old " + applier.apply(Operation.increment("e", 5, "cents", 2)));
        System.out.println("OUT 261 " + applier.apply(Operation.increment("e", 261, "cents", 1)));
        show("old", c, "e");
        assertThat(EntityState.of(c.find(eq("_id", "e")).first(), SCHEMA).counters().get("cents"))
                .isEqualTo(BigInteger.valueOf(sum + 5 + 1));
        System.out.println("OUT delete 100 " + applier.apply(Operation.delete("e", 100)));
        show("old after delete", c, "e");
        assertThat(EntityState.of(c.find(eq("_id", "e")).first(), SCHEMA).counters().get("cents"))
                .isEqualTo(BigInteger.valueOf(160 * 2 + 1));
        TombstoneCompactor compactor = TombstoneCompactor.create(c, SCHEMA, Duration.ofHours(1),
                ApplierOptions.ofDefaults().withClock(clock));
        clock.advance(Duration.ofHours(2));
        System.out.println("COMPACT " + compactor.compact("e"));
        show("old compacted", c, "e");
    }
}
