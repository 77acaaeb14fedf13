package dev.orderless.view;

/** This feeder no longer holds its lease: stop processing at once and go back to standby. */
final class LeaseLostException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    LeaseLostException(String when) {
        super(when, null, false, false);
    }
}
