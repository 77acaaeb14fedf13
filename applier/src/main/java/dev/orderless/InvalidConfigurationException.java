package dev.orderless;

/** A configuration that cannot work; the message says which parameter to change and how. */
public class InvalidConfigurationException extends OrderlessException {
    private static final long serialVersionUID = 1L;

    public InvalidConfigurationException(String message) {
        super(message);
    }
}
