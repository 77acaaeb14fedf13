package dev.orderless.stamp;

import static org.assertj.core.api.Assertions.assertThat;

import com.mongodb.client.MongoDatabase;
import dev.orderless.testing.MongoExtension;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.LongStream;
import org.bson.BsonDocument;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

@ExtendWith(MongoExtension.class)
class MongoCounterStamperTest {

    @Test
    void two_stampers_on_eight_threads_each_give_every_entity_strictly_increasing_unique_seqs(MongoDatabase db)
            throws Exception {
        var counters = db.getCollection("seq_counters", BsonDocument.class);
        List<Stamper> stampers = List.of(MongoCounterStamper.create(counters), MongoCounterStamper.create(counters));
        int threads = 8;
        int perThread = 2_500;   // 40,000 stamps, 800 per entity under 16 threads of contention: enough to show a duplicate
        int entities = 50;

        long started = System.nanoTime();
        List<List<StampRun.Stamp>> runs = StampRun.run(stampers, threads, perThread, entities);
        double seconds = (System.nanoTime() - started) / 1e9;

        Map<String, List<Long>> byEntity = new HashMap<>();
        for (List<StampRun.Stamp> run : runs) {
            Map<String, Long> lastSeen = new HashMap<>();
            for (StampRun.Stamp s : run) {
                Long previous = lastSeen.put(s.entity(), s.seq());
                assertThat(previous == null || previous < s.seq())
                        .as("each thread sees %s increase: %s then %s", s.entity(), previous, s.seq()).isTrue();
                byEntity.computeIfAbsent(s.entity(), e -> new ArrayList<>()).add(s.seq());
            }
        }
        // the seqs of each entity are exactly 1..n: unique, no gaps, so strictly increasing in the order issued
        byEntity.forEach((entity, seqs) -> assertThat(seqs.stream().sorted().toList())
                .as(entity).isEqualTo(LongStream.rangeClosed(1, seqs.size()).boxed().toList()));
        int total = runs.stream().mapToInt(List::size).sum();
        assertThat(total).isEqualTo(2 * threads * perThread);
        System.out.printf("[stamp] MongoDB counter: 2 stampers x %d threads x %d stamps = %d stamps over %d entities,"
                + " unique and strictly increasing per entity (%.0f stamps/s)%n", threads, perThread, total, entities,
                total / seconds);
    }
}
