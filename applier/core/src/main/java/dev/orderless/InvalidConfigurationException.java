package dev.orderless;

import java.util.Optional;

/**
 * A configuration that cannot work; the message says which parameter or setting to change and how.
 * Thrown at start-up, and at run time when MongoDB refuses a write for a reason of configuration
 * (permissions, a shard key other than {@code _id}, an unknown write concern): such a failure is the
 * same for every message, so a consumer holds its messages and logs it rather than dead-lettering them.
 *
 * <p>A refused value of one option carries the option's name in code apart from the problem
 * ({@link #setting()}, {@link #problem()}), so that a layer which sets the option under another name
 * (a Spring Boot property, say) can name it its own way without reading the message.
 */
public class InvalidConfigurationException extends OrderlessException {
    private static final long serialVersionUID = 1L;

    /** The refused option's name in code; null when the problem is not one option's. */
    private final String setting;   // null: the problem is not one option's
    /** What is wrong: without the option's name when there is a {@link #setting}, else the whole message. */
    private final String problem;

    /**
     * A problem that is not one option's: {@link #setting()} is empty and {@link #problem()} is the message.
     *
     * @param message what cannot work and how to change it
     */
    public InvalidConfigurationException(String message) {
        super(message);
        this.setting = null;
        this.problem = message;
    }

    /**
     * A problem that is not one option's, found through {@code cause} (a refusal from MongoDB, say):
     * {@link #setting()} is empty and {@link #problem()} is the message.
     *
     * @param message what cannot work and how to change it
     * @param cause   the error that showed it
     */
    public InvalidConfigurationException(String message, Throwable cause) {
        super(message, cause);
        this.setting = null;
        this.problem = message;
    }

    private InvalidConfigurationException(String message, String setting, String problem) {
        super(message);
        this.setting = setting;
        this.problem = problem;
    }

    /**
     * The value of {@code setting} refused: the message is {@code "<setting> <problem>"}.
     *
     * @param setting the option's name in code, dotted where it is nested, e.g. {@code "backoff.initial"}
     * @param problem what is wrong and how to change it, without the name, e.g. {@code "must be positive, was PT0S"}
     * @return the exception, to throw
     */
    public static InvalidConfigurationException refused(String setting, String problem) {
        return new InvalidConfigurationException(setting + " " + problem, setting, problem);
    }

    /**
     * The value of {@code setting} of {@code options} refused: the message is
     * {@code "<options>: <setting> <problem>"}, e.g. {@code "consumer options: concurrency must be between 1 and 256, was 0"}.
     *
     * @param options which options the setting belongs to, as the message names them, e.g. {@code "consumer options"}
     * @param setting the option's name in code, e.g. {@code "concurrency"}
     * @param problem what is wrong and how to change it, without the name
     * @return the exception, to throw
     */
    public static InvalidConfigurationException refused(String options, String setting, String problem) {
        return new InvalidConfigurationException(options + ": " + setting + " " + problem, setting, problem);
    }

    /**
     * The option whose value was refused, by its name in code (e.g. {@code "concurrency"}); empty if not one option's.
     *
     * @return the option's name, as given to {@link #refused(String, String)} or {@link #refused(String, String, String)}
     */
    public Optional<String> setting() {
        return Optional.ofNullable(setting);
    }

    /**
     * What is wrong, without the option's name when there is {@link #setting()}; else the whole message.
     *
     * @return the problem, fit to follow the option's name under any naming
     */
    public String problem() {
        return problem;
    }
}
