package dev.orderless.publish;

import dev.orderless.OrderlessException;
import dev.orderless.apply.Operation;
import java.util.List;

/** The broker did not take these operations after every attempt; they were not sent. Nothing was dropped. */
public class PublishFailedException extends OrderlessException {
    private static final long serialVersionUID = 1L;

    private final transient List<Operation> failed;

    public PublishFailedException(String message, List<Operation> failed) {
        super(message);
        this.failed = List.copyOf(failed);
    }

    /** The operations the broker did not confirm. */
    public List<Operation> failed() {
        return failed;
    }
}
