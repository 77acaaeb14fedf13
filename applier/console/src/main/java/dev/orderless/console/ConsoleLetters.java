package dev.orderless.console;

import dev.orderless.console.audit.AuditLog;
import dev.orderless.console.letters.LetterActions;
import dev.orderless.console.letters.LetterIngestion;
import dev.orderless.console.letters.LetterStore;
import dev.orderless.console.fleet.LetterFigures;
import dev.orderless.console.letters.LetterQuery;
import dev.orderless.console.letters.LetterStatus;
import java.time.Clock;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import org.springframework.context.SmartLifecycle;

/**
 * The console's letters: where they are kept, what operators do to them and the record of it, and the ingestions
 * moving each consumer's dead letters in, started and stopped with the application.
 */
final class ConsoleLetters implements SmartLifecycle, LetterFigures {
    private final LetterStore store;
    private final LetterActions actions;
    private final AuditLog audit;
    private final List<LetterIngestion> ingestions;
    private final Clock clock;

    ConsoleLetters(LetterStore store, LetterActions actions, AuditLog audit, List<LetterIngestion> ingestions,
                   Clock clock) {
        this.store = store;
        this.actions = actions;
        this.audit = audit;
        this.ingestions = List.copyOf(ingestions);
        this.clock = clock;
    }

    @Override
    public OptionalLong dead(String queue) {
        return OptionalLong.of(store.count(LetterQuery.dead().withQueue(queue)));
    }

    @Override
    public OptionalLong parked(String queue) {
        return OptionalLong.of(store.count(LetterQuery.dead().withQueue(queue)
                .withStatuses(List.of(LetterStatus.PARKED))));
    }

    @Override
    public Map<String, Long> arrivedSince(Instant since) {
        return store.arrivals(since);
    }

    @Override
    public Map<String, String> ingestionWaiting() {
        Map<String, String> waiting = new LinkedHashMap<>();
        for (LetterIngestion ingestion : ingestions) {
            ingestion.waitingFor().ifPresent(why -> waiting.put(ingestion.queue().workQueue(), why));
            if (ingestion.isRunning() && !ingestion.isConsuming() && ingestion.waitingFor().isEmpty()) {
                waiting.put(ingestion.queue().workQueue(), "the dead-letter queue '"
                        + ingestion.queue().deadLetterQueue() + "' is not consumed (the broker does not answer, or"
                        + " the queue does not exist yet): its letters are not stored");
            }
        }
        return waiting;
    }

    LetterStore store() {
        return store;
    }

    LetterActions actions() {
        return actions;
    }

    AuditLog audit() {
        return audit;
    }

    List<LetterIngestion> ingestions() {
        return ingestions;
    }

    @Override
    public void start() {
        ingestions.forEach(LetterIngestion::start);
    }

    @Override
    public void stop() {
        ingestions.forEach(LetterIngestion::stop);
    }

    @Override
    public boolean isRunning() {
        return ingestions.stream().anyMatch(LetterIngestion::isRunning);
    }

    /**
     * With the consumers (the last phase, started after them as it is declared after them), which declare the
     * dead-letter queues: an ingestion started first waits for its queue.
     */
    @Override
    public int getPhase() {
        return Integer.MAX_VALUE;
    }
}
