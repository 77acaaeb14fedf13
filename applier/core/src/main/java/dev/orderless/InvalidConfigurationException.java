package dev.orderless;

/**
 * A configuration that cannot work; the message says which parameter or setting to change and how.
 * Thrown at start-up, and at run time when MongoDB refuses a write for a reason of configuration
 * (permissions, a shard key other than {@code _id}, an unknown write concern): such a failure is the
 * same for every message, so a consumer holds its messages and logs it rather than dead-lettering them.
 */
public class InvalidConfigurationException extends OrderlessException {
    private static final long serialVersionUID = 1L;

    public InvalidConfigurationException(String message) {
        super(message);
    }

    public InvalidConfigurationException(String message, Throwable cause) {
        super(message, cause);
    }
}
