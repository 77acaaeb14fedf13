package dev.orderless.boot.internal;

import dev.orderless.InvalidConfigurationException;
import java.util.Locale;
import java.util.function.Supplier;

/**
 * orderless's options read from {@code orderless.*} properties, and their refusals reported as the property
 * to change: one mapping from an option's name in code ({@link InvalidConfigurationException#setting()})
 * to its property, the same for every options record.
 */
public final class OptionProperties {
    private OptionProperties() {
    }

    /**
     * Builds options from the properties under {@code prefix}; a value the options refuse fails the start
     * naming its property ({@link #named(String, InvalidConfigurationException)}).
     */
    public static <T> T under(String prefix, Supplier<T> build) {
        try {
            return build.get();
        } catch (InvalidConfigurationException e) {
            throw named(prefix, e);
        }
    }

    /**
     * {@code refused} as the property under {@code prefix} that sets it:
     * {@code "<prefix>.<setting in kebab case> <problem>"}, e.g. {@code maxHold} under
     * {@code orderless.consumer} as {@code "orderless.consumer.max-hold must be a positive duration, was PT0S"}.
     * A refusal that names no setting keeps its message, after the prefix.
     */
    public static InvalidConfigurationException named(String prefix, InvalidConfigurationException refused) {
        return refused.setting()
                .map(setting -> new InvalidConfigurationException(prefix + "." + kebab(setting) + " " + refused.problem()))
                .orElseGet(() -> new InvalidConfigurationException(prefix + ": " + refused.getMessage()));
    }

    /** An option's name in code as a property name: {@code batchReceiveTimeout} as {@code batch-receive-timeout}. */
    static String kebab(String setting) {
        return setting.replaceAll("([a-z0-9])([A-Z])", "$1-$2").toLowerCase(Locale.ROOT);
    }
}
