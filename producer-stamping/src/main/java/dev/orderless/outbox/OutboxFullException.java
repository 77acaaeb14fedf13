package dev.orderless.outbox;

import dev.orderless.TransientException;

/**
 * Back-pressure: the outbox holds as many entries as it may, so the action was not recorded (nothing
 * was stamped into it, nothing is lost; the caller still has it). The relays are not draining it: the
 * broker is down or blocking, or no relay runs. Answer 503 or try again later.
 */
public class OutboxFullException extends TransientException {
    private static final long serialVersionUID = 1L;

    private final long backlog;
    private final long limit;

    /**
     * An action refused because the outbox is full.
     *
     * @param message what happened, for the caller
     * @param backlog the entries waiting when the action was refused
     * @param limit   the outbox's {@link OutboxOptions#maxBacklog()}
     */
    public OutboxFullException(String message, long backlog, long limit) {
        super(message);
        this.backlog = backlog;
        this.limit = limit;
    }

    /** The entries waiting when the action was refused. */
    public long backlog() {
        return backlog;
    }

    /** The outbox's {@link OutboxOptions#maxBacklog()}. */
    public long limit() {
        return limit;
    }
}
