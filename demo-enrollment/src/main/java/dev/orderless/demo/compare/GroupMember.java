package dev.orderless.demo.compare;

import com.mongodb.client.MongoCollection;
import dev.orderless.apply.Operation;
import dev.orderless.message.Envelope;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.CommitFailedException;
import org.apache.kafka.common.errors.FencedMemberEpochException;
import org.apache.kafka.common.errors.RebalanceInProgressException;
import org.apache.kafka.common.errors.StaleMemberEpochException;
import org.apache.kafka.common.errors.UnknownMemberIdException;
import org.apache.kafka.common.errors.WakeupException;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.bson.BsonDocument;

/**
 * The consumer-group contestant's member: one KafkaConsumer on a poll thread of its own, what a Kafka team writes
 * to keep per-key order. Per poll (up to {@link Trial#BATCH} records, each partition's in order) one ordered bulk
 * write of plain upserts, then the polled offsets committed: at-least-once, in partition order. Its consumer is
 * built on its poll thread, in its process's thread group, so that its network thread is the process's too.
 */
final class GroupMember implements AutoCloseable {
    private final KafkaConsumerProcess process;
    private final Map<String, Object> properties;
    private final String topic;
    private final MongoCollection<BsonDocument> students;
    private final Tally tally;
    private final Stuck stuck;
    private final Duration stall;
    private final Envelope envelope = new Envelope();
    private volatile KafkaConsumer<String, byte[]> consumer;
    private volatile boolean stopping;
    private volatile Throwable failed;
    private Thread thread;

    /**
     * @param kafka any Kafka client property (bootstrap.servers at least)
     * @param group the consumer group every member of the trial joins
     * @param stall how long the stuck handler may hold this member (bounds the wait in {@link #close})
     */
    GroupMember(KafkaConsumerProcess process, Map<String, Object> kafka, String topic, String group,
                MongoCollection<BsonDocument> students, Tally tally, Stuck stuck, Duration stall) {
        this.process = process;
        this.topic = topic;
        this.students = students;
        this.tally = tally;
        this.stuck = stuck;
        this.stall = stall;
        Map<String, Object> p = new HashMap<>(kafka);
        p.put(ConsumerConfig.GROUP_ID_CONFIG, group);
        // the consumer rebalance protocol (KIP-848), GA since Kafka 4.0: members join without stopping the others
        p.put(ConsumerConfig.GROUP_PROTOCOL_CONFIG, "consumer");
        p.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        p.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
        p.put(ConsumerConfig.MAX_POLL_RECORDS_CONFIG, Trial.BATCH);
        p.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class);
        p.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class);
        p.put(ConsumerConfig.CLIENT_ID_CONFIG, group + "-" + process.id);
        this.properties = Map.copyOf(p);
    }

    /** Starts the poll thread in the process's thread group and returns; the member joins the group from there. */
    GroupMember start() {
        thread = new Thread(process.threads, this::poll, "compare-kafka-group-" + process.id);
        thread.start();
        process.runs(this);
        return this;
    }

    /** Why the poll thread ended, if it ended other than by {@link #close}. */
    Optional<Throwable> failed() {
        return Optional.ofNullable(failed);
    }

    private void poll() {
        try (KafkaConsumer<String, byte[]> mine = new KafkaConsumer<>(properties)) {
            consumer = mine;
            mine.subscribe(List.of(topic));
            while (!stopping) {
                ConsumerRecords<String, byte[]> records = mine.poll(Duration.ofMillis(100));
                if (!records.isEmpty()) {
                    apply(records);
                    commit(mine);
                }
            }
        } catch (WakeupException e) {
            if (!stopping) {
                failed = e;
            }
        } catch (RuntimeException | Error e) {
            failed = e;   // said by the arena, which stops the trial instead of waiting for what never comes
        }
    }

    /**
     * Commits what was polled. A commit refused because the partitions moved to another member meanwhile (a member
     * joined) is no failure of the member: the new owner reads from the last committed offset and applies those
     * records again, in order, as at-least-once does; any other failure ends the member and the trial.
     */
    private static void commit(KafkaConsumer<String, byte[]> mine) {
        try {
            mine.commitSync();
        } catch (CommitFailedException | RebalanceInProgressException | StaleMemberEpochException
                 | FencedMemberEpochException | UnknownMemberIdException e) {
            // the partitions are another member's now; it takes over from the last commit
        }
    }

    private void apply(ConsumerRecords<String, byte[]> records) {
        tally.handledBy(process.id);
        List<Operation> ops = new ArrayList<>(records.count());
        for (ConsumerRecord<String, byte[]> record : records) {
            ops.add(envelope.decode(record.value()));
        }
        stuck.maybe(ops.get(0).entity());
        PlainUpserts.applyOrdered(students, ops);
        long now = System.nanoTime();
        for (Operation op : ops) {
            tally.applied(KafkaArena.index(op), op.entity(), op.seq(), now);
        }
    }

    @Override
    public void close() {
        stopping = true;
        KafkaConsumer<String, byte[]> mine = consumer;
        if (mine != null) {
            mine.wakeup();
        }
        if (thread != null) {
            try {
                thread.join(stall.plusSeconds(30).toMillis());   // a stuck handler is let finish, as a graceful stop would
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            if (thread.isAlive()) {
                throw new IllegalStateException("consumer-group member " + process.id + " did not stop within "
                        + stall.plusSeconds(30).toSeconds() + " s");
            }
        }
    }
}
