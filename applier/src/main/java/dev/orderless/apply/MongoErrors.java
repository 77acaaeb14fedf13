package dev.orderless.apply;

import com.mongodb.ErrorCategory;
import com.mongodb.MongoException;
import com.mongodb.MongoExecutionTimeoutException;
import com.mongodb.MongoInterruptedException;
import com.mongodb.MongoNodeIsRecoveringException;
import com.mongodb.MongoNotPrimaryException;
import com.mongodb.MongoSocketException;
import com.mongodb.MongoTimeoutException;
import com.mongodb.MongoWriteConcernException;
import com.mongodb.MongoWriteException;
import dev.orderless.OrderlessException;
import dev.orderless.TransientException;

/** Sorts the driver's exceptions into what a caller does about them; the one place that knows the codes. */
public final class MongoErrors {
    private MongoErrors() {
    }

    /**
     * A duplicate key, whichever way the driver reports it: a {@link MongoWriteException} from an update,
     * or a {@code MongoCommandException} from a command such as {@code findAndModify}.
     */
    public static boolean isDuplicateKey(MongoException e) {
        int code = e instanceof MongoWriteException w ? w.getError().getCode() : e.getCode();
        return ErrorCategory.fromErrorCode(code) == ErrorCategory.DUPLICATE_KEY;
    }

    /** A {@link TransientException} for failures that may pass, else an {@link OrderlessException}. */
    public static OrderlessException translate(String what, MongoException e) {
        if (isTransient(e)) {
            return new TransientException(what + ": MongoDB unavailable or busy: " + e.getMessage(), e);
        }
        return new OrderlessException(what + ": " + e.getMessage(), e);
    }

    public static boolean isTransient(MongoException e) {
        return e instanceof MongoSocketException
                || e instanceof MongoTimeoutException
                || e instanceof MongoNotPrimaryException
                || e instanceof MongoNodeIsRecoveringException
                || e instanceof MongoWriteConcernException
                || e instanceof MongoExecutionTimeoutException
                || e instanceof MongoInterruptedException
                || e.hasErrorLabel(MongoException.TRANSIENT_TRANSACTION_ERROR_LABEL)
                || e.hasErrorLabel("RetryableWriteError");
    }
}
