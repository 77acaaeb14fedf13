package dev.orderless.consume.internal;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import dev.orderless.apply.Operation;
import java.io.IOException;
import java.util.Optional;
import java.util.OptionalLong;

/**
 * Whose operation a dead letter held, as far as it is known: its entity and seq, carried as the letter's
 * {@link DeadLetterFields#ENTITY} and {@link DeadLetterFields#SEQ}, so that {@code DeadLetterQueue} groups letters by
 * reason and names the entities of each group without parsing reasons.
 *
 * @param entity the entity, if known
 * @param seq    the seq, if known
 */
public record LetterSubject(Optional<String> entity, OptionalLong seq) {
    /** The longest entity a letter carries (an operation's entity is at most 512 characters). */
    private static final int MAX_ENTITY = Operation.MAX_KEY_LENGTH;
    private static final JsonFactory JSON = new JsonFactory();

    /** Nothing known. */
    public static LetterSubject none() {
        return new LetterSubject(Optional.empty(), OptionalLong.empty());
    }

    /** The subject of a decoded operation. */
    public static LetterSubject of(Operation op) {
        return new LetterSubject(Optional.of(op.entity()), OptionalLong.of(op.seq()));
    }

    /** {@code " (entity 'e', seq 7)"}, or as much of it as is known, for the end of a reason; empty if nothing is. */
    public String about() {
        java.util.List<String> parts = new java.util.ArrayList<>();
        entity.ifPresent(e -> parts.add("entity '" + clip(e) + "'"));
        seq.ifPresent(s -> parts.add("seq " + s));
        return parts.isEmpty() ? "" : " (" + String.join(", ", parts) + ")";
    }

    /** An entity as a reason names it: at most 60 characters, as the envelope clips it too. */
    public static String clip(String entity) {
        return entity.length() <= 60 ? entity : entity.substring(0, 57) + "...";
    }

    /**
     * The subject of a body that was not decoded (refused, or too large): its top-level {@code entity} (a string of
     * at most 512 characters) and {@code seq} (a whole number) where it is a JSON object that has them, read in one
     * pass that skips every other member; none for anything else.
     */
    public static LetterSubject peek(byte[] body) {
        Optional<String> entity = Optional.empty();
        OptionalLong seq = OptionalLong.empty();
        try (JsonParser parser = JSON.createParser(body)) {
            if (parser.nextToken() != JsonToken.START_OBJECT) {
                return none();
            }
            while (parser.nextToken() == JsonToken.FIELD_NAME && (entity.isEmpty() || seq.isEmpty())) {
                String name = parser.currentName();
                JsonToken value = parser.nextToken();
                if (name.equals("entity") && value == JsonToken.VALUE_STRING) {
                    String text = parser.getText();
                    entity = text.length() <= MAX_ENTITY ? Optional.of(text) : Optional.empty();
                } else if (name.equals("seq") && value == JsonToken.VALUE_NUMBER_INT
                        && parser.getNumberType() != JsonParser.NumberType.BIG_INTEGER) {
                    seq = OptionalLong.of(parser.getLongValue());
                } else {
                    parser.skipChildren();
                }
            }
        } catch (IOException | RuntimeException e) {
            // not JSON, or broken further on: what was read before stands
        }
        return new LetterSubject(entity, seq);
    }
}
