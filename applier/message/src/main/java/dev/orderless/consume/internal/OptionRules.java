package dev.orderless.consume.internal;

import dev.orderless.InvalidConfigurationException;
import java.time.Duration;

/**
 * The rules every consumer's options check, stated once: each broker's options record (RabbitMQ's
 * {@code ConsumerOptions}, Kafka's {@code ShareConsumerOptions}) calls them from its compact constructor, so a value
 * is refused with the same words whatever the broker, naming the options and the parameter.
 */
public final class OptionRules {
    private OptionRules() {
    }

    /** A name that is set and not blank, refused as "must be {@code what}" otherwise. */
    public static void name(String options, String parameter, String value, String what) {
        if (value == null || value.isBlank()) {
            throw InvalidConfigurationException.refused(options, parameter, "must be " + what);
        }
    }

    /** A number from {@code min} to {@code max}, both included. */
    public static void range(String options, String parameter, int value, int min, int max) {
        if (value < min || value > max) {
            throw InvalidConfigurationException.refused(options, parameter, "must be between " + min + " and " + max
                    + ", was " + value);
        }
    }

    /** A duration longer than zero. */
    public static void positive(String options, String parameter, Duration value) {
        if (value == null || value.isNegative() || value.isZero()) {
            throw InvalidConfigurationException.refused(options, parameter, "must be a positive duration, was " + value);
        }
    }
}
