package dev.orderless.publish;

import dev.orderless.apply.Operation;
import java.util.List;

/**
 * RabbitMQ blocked publishing (a memory or disk alarm) for longer than the publisher's confirm timeout:
 * the operations listed were not confirmed. Nothing was dropped; they may have been taken (publishing
 * them again is harmless). A caller acts on it differently from other publish failures: the broker is
 * saying to slow down, for everyone, until an operator clears the alarm (answer 503, back off).
 */
public class BrokerBlockedException extends PublishFailedException {
    private static final long serialVersionUID = 1L;

    private final String brokerReason;

    /**
     * A publish that failed because the broker blocked publishers past the confirm timeout.
     *
     * @param brokerReason the broker's reason, such as "low on disk"
     * @param message      what happened, for the log
     * @param failed       the operations not confirmed
     */
    public BrokerBlockedException(String brokerReason, String message, List<Operation> failed) {
        super(message, failed);
        this.brokerReason = brokerReason;
    }

    /** The broker's reason, such as "low on disk". */
    public String brokerReason() {
        return brokerReason;
    }
}
