package dev.orderless.apply;

import com.mongodb.ConnectionString;
import com.mongodb.MongoClientSettings;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.event.CommandListener;
import com.mongodb.event.CommandStartedEvent;
import com.mongodb.event.CommandSucceededEvent;
import dev.orderless.backends.MongoBackend;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;

/**
 * Another consumer's doing, run once at a chosen point of a batch sent through {@link #client}: {@link #onFirstFind}
 * right after the batch's first find succeeds (between its read and its write), {@link #beforeFirstUpdate} just
 * before its first write goes out.
 */
final class FirstCommandHooks implements CommandListener {
    final AtomicReference<Runnable> onFirstFind = new AtomicReference<>();
    final AtomicReference<Runnable> beforeFirstUpdate = new AtomicReference<>();
    private final AtomicBoolean firedFind = new AtomicBoolean();
    private final AtomicBoolean firedUpdate = new AtomicBoolean();

    /** A client of {@code backend} whose commands run these hooks; the caller closes it. */
    MongoClient client(MongoBackend backend) {
        return MongoClients.create(MongoClientSettings.builder()
                .applyConnectionString(new ConnectionString(backend.connectionString()))
                .addCommandListener(this).build());
    }

    @Override
    public void commandStarted(CommandStartedEvent event) {
        Runnable r = beforeFirstUpdate.get();
        if (r != null && event.getCommandName().equals("update") && firedUpdate.compareAndSet(false, true)) {
            r.run();
        }
    }

    @Override
    public void commandSucceeded(CommandSucceededEvent event) {
        Runnable r = onFirstFind.get();
        if (r != null && event.getCommandName().equals("find") && firedFind.compareAndSet(false, true)) {
            r.run();
        }
    }
}
