package dev.orderless.view;

import dev.orderless.OrderlessException;

/** The feeder cannot go on (its source was dropped or renamed, say); the message says what to do. */
public final class FeederStoppedException extends OrderlessException {
    private static final long serialVersionUID = 1L;

    FeederStoppedException(String message) {
        super(message);
    }
}
