package dev.orderless.view;

import static org.assertj.core.api.Assertions.assertThat;

import com.mongodb.ConnectionString;
import com.mongodb.MongoClientSettings;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.MongoDatabase;
import com.mongodb.event.CommandListener;
import com.mongodb.event.CommandStartedEvent;
import dev.orderless.apply.GuardedApplier;
import dev.orderless.backends.MongoBackend;
import dev.orderless.testing.MongoExtension;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.util.List;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import org.bson.BsonDocument;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * How the feeder writes the view: each event's operations in one bulk write, the elements the source's
 * previous version placed hinted as present, so an event costs one round trip to the view in steady
 * state ({@link FeederOptions.Writes#BULK}); or one write per operation.
 */
@ExtendWith(MongoExtension.class)
class ViewWritesTest {
    private static final int STUDENTS = 20;

    @Test
    void an_event_after_the_first_costs_the_view_one_bulk_write_and_no_read(MongoBackend backend, MongoDatabase db) {
        List<String> viewCommands = renameEveryone(backend, db, FeederOptions.Writes.BULK);

        assertThat(viewCommands).as("one bulk write per event: three refreshes, none of them read first")
                .hasSize(STUDENTS).containsOnly("update");
    }

    @Test
    void one_write_at_a_time_reaches_the_same_view_with_a_read_per_element_already_there(MongoBackend backend,
                                                                                          MongoDatabase db) {
        List<String> viewCommands = renameEveryone(backend, db, FeederOptions.Writes.ONE_AT_A_TIME);

        assertThat(viewCommands.stream().filter("find"::equals).count()).as("a read per element").isEqualTo(3L * STUDENTS);
        assertThat(viewCommands).hasSize(9 * STUDENTS);
    }

    /**
     * Every student in C1 and C2 and out of C3; a feeder catches up; then each student is renamed once
     * (one event each, three view ops each). Returns the commands the feeder sent to the view for the renames.
     */
    private static List<String> renameEveryone(MongoBackend backend, MongoDatabase db, FeederOptions.Writes writes) {
        Queue<String> commands = new ConcurrentLinkedQueue<>();
        try (ViewFixture f = new ViewFixture(db); MongoClient counted = countingClient(backend, commands)) {
            for (int i = 0; i < STUDENTS; i++) {
                f.enroll("s" + i, "C1");
                f.enroll("s" + i, "C2");
                f.enroll("s" + i, "C3");
                f.unenroll("s" + i, "C3");
            }
            GuardedApplier rosters = GuardedApplier.create(counted.getDatabase(db.getName())
                    .getCollection("rosters", BsonDocument.class), ViewFixture.ROSTERS);
            f.start(f.options("a").withWrites(writes), ViewFixture::rosterOps, new SimpleMeterRegistry(), rosters);
            f.awaitViewMatchesSource();
            commands.clear();

            for (int i = 0; i < STUDENTS; i++) {
                f.rename("s" + i, "Student " + i);
            }
            f.awaitViewMatchesSource();
            // the view matches once the new names are in; the last event's remaining ops may still be on their way
            int expected = writes == FeederOptions.Writes.BULK ? STUDENTS : 9 * STUDENTS;
            org.awaitility.Awaitility.await("the last event's commands").atMost(java.time.Duration.ofSeconds(10))
                    .until(() -> commands.size() >= expected);
            return List.copyOf(commands);
        }
    }

    /** A client that records the name of every command it sends to the rosters collection. */
    private static MongoClient countingClient(MongoBackend backend, Queue<String> commands) {
        return MongoClients.create(MongoClientSettings.builder()
                .applyConnectionString(new ConnectionString(backend.connectionString()))
                .addCommandListener(new CommandListener() {
                    @Override
                    public void commandStarted(CommandStartedEvent event) {
                        BsonDocument command = event.getCommand();
                        if (command.get(event.getCommandName()) != null
                                && command.get(event.getCommandName()).isString()
                                && command.getString(event.getCommandName()).getValue().equals("rosters")) {
                            commands.add(event.getCommandName());
                        }
                    }
                }).build());
    }
}
