package dev.orderless.amqp;

import java.util.Optional;
import java.util.OptionalLong;
import java.util.regex.Pattern;

/**
 * A dead letter's reason with its entity and seq taken out, so that letters that failed for one reason group
 * together whichever entities they held: {@code missing 'seq' (entity 'p1')} and {@code missing 'seq' (entity 'p2')}
 * are both {@code missing 'seq'}. A pure reading of the text and the letter's subject headers, with no backend.
 */
final class ReasonShape {
    /** The {@code (entity 'e', seq 7)} that the envelope and the applier put at the end of a reason. */
    private static final Pattern SUBJECT_AT_END = Pattern.compile(" \\((?:entity '.*?'(?:, seq -?\\d+)?|seq -?\\d+)\\)$");

    private ReasonShape() {
    }

    /** {@code reason} without its trailing subject, and with the entity and seq it names elsewhere as {@code …}. */
    static String of(String reason, Optional<String> entity, OptionalLong seq) {
        String shape = SUBJECT_AT_END.matcher(reason).replaceFirst("");
        if (entity.isPresent() && !entity.get().isEmpty()) {
            shape = shape.replace("'" + entity.get() + "'", "'…'");
        }
        if (seq.isPresent()) {
            shape = shape.replaceAll("\\bseq " + seq.getAsLong() + "\\b", "seq …");
        }
        return shape;
    }
}
