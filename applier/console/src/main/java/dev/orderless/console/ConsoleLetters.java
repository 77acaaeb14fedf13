package dev.orderless.console;

import dev.orderless.console.audit.AuditLog;
import dev.orderless.console.letters.LetterActions;
import dev.orderless.console.letters.LetterIngestion;
import dev.orderless.console.letters.LetterStore;
import java.util.List;
import org.springframework.context.SmartLifecycle;

/**
 * The console's letters: where they are kept, what operators do to them and the record of it, and the ingestions
 * moving each consumer's dead letters in, started and stopped with the application.
 */
final class ConsoleLetters implements SmartLifecycle {
    private final LetterStore store;
    private final LetterActions actions;
    private final AuditLog audit;
    private final List<LetterIngestion> ingestions;

    ConsoleLetters(LetterStore store, LetterActions actions, AuditLog audit, List<LetterIngestion> ingestions) {
        this.store = store;
        this.actions = actions;
        this.audit = audit;
        this.ingestions = List.copyOf(ingestions);
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

    /** After the consumers, which declare the dead-letter queues. */
    @Override
    public int getPhase() {
        return Integer.MAX_VALUE - 2048;
    }
}
