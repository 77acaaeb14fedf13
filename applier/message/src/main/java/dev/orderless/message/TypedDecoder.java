package dev.orderless.message;

import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.orderless.InvalidInputException;
import dev.orderless.apply.Operation;
import java.io.IOException;
import java.util.function.Function;

/**
 * Decodes your own message class with Jackson and maps it to an {@link Operation}, for producers that
 * do not send the canonical {@link Envelope}:
 *
 * <pre>
 * record Enrolled(String studentId, long sequence, String course) {}
 * OperationDecoder decoder = TypedDecoder.of(Enrolled.class,
 *         e -&gt; Operation.add(e.studentId(), e.sequence(), "classes", e.course()));
 * </pre>
 *
 * A body Jackson cannot read, or a mapping that throws, is bad input with a short reason.
 *
 * @param <T> your message class
 */
public final class TypedDecoder<T> implements OperationDecoder {
    private final Class<T> type;
    private final Function<? super T, Operation> mapping;
    private final ObjectMapper json;

    private TypedDecoder(Class<T> type, Function<? super T, Operation> mapping, ObjectMapper json) {
        this.type = type;
        this.mapping = mapping;
        this.json = json;
    }

    /** Reads bodies as {@code type} with a plain {@link ObjectMapper} (trailing tokens refused), then maps them. */
    public static <T> TypedDecoder<T> of(Class<T> type, Function<? super T, Operation> mapping) {
        return new TypedDecoder<>(type, mapping,
                new ObjectMapper().enable(DeserializationFeature.FAIL_ON_TRAILING_TOKENS));
    }

    /** With your own configured {@link ObjectMapper}. */
    public static <T> TypedDecoder<T> of(Class<T> type, Function<? super T, Operation> mapping, ObjectMapper json) {
        return new TypedDecoder<>(type, mapping, json);
    }

    @Override
    public Operation decode(byte[] body) {
        T message;
        try {
            message = json.readValue(body, type);
        } catch (IOException e) {
            String line = e.getMessage() == null ? "" : e.getMessage().lines().findFirst().orElse("");
            throw new InvalidInputException("not a " + type.getSimpleName() + ": " + Envelope.clip(line));
        }
        if (message == null) {
            throw new InvalidInputException("not a " + type.getSimpleName() + ": null");
        }
        Operation op = mapping.apply(message);
        if (op == null) {
            throw new InvalidInputException(type.getSimpleName() + " mapped to no operation");
        }
        return op;
    }
}
