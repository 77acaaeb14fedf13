package dev.orderless.publish;

import dev.orderless.OrderlessException;
import dev.orderless.apply.Operation;
import java.util.List;
import java.util.Map;

/**
 * The broker did not take these operations after every attempt; they were not sent, or not confirmed.
 * Nothing was dropped: publishing them again is harmless.
 */
public class PublishFailedException extends OrderlessException {
    private static final long serialVersionUID = 1L;

    private final transient List<Operation> failed;
    private final transient Map<Operation, String> refused;

    /**
     * A failure where every operation reached the connection: none was refused before it was sent.
     *
     * @param message what happened, for the log
     * @param failed  every operation not confirmed
     */
    public PublishFailedException(String message, List<Operation> failed) {
        this(message, failed, Map.of());
    }

    /**
     * A failure where some operations could not be sent at all.
     *
     * @param message what happened, for the log
     * @param failed  every operation not confirmed, the refused ones included
     * @param refused those of them that could not be sent at all, each with why (see {@link #refused()})
     */
    public PublishFailedException(String message, List<Operation> failed, Map<Operation, String> refused) {
        super(message);
        this.failed = List.copyOf(failed);
        this.refused = Map.copyOf(refused);
    }

    /** The operations the broker did not confirm, in the order given (the refused ones included). */
    public List<Operation> failed() {
        return failed;
    }

    /**
     * Operations that never reached the broker because the message itself could not be sent: its
     * properties do not encode as AMQP (a header a tracing handler added, say), or building it failed. The
     * publisher does not send these again, since the same message fails the same way; each maps to why.
     * A failure the broker or the connection caused (a nack, a return, no confirm, a cut) is never here.
     */
    public Map<Operation, String> refused() {
        return refused;
    }
}
