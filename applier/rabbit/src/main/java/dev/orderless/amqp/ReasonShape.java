package dev.orderless.amqp;

import dev.orderless.consume.internal.LetterSubject;
import java.util.List;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A dead letter's reason with what varies from letter to letter set aside, so that letters that failed for one
 * cause group together: {@code missing 'seq' (entity 'p1')} and {@code missing 'seq' (entity 'p2')} are both
 * {@code missing 'seq'}; {@code held too long: 'a' seq 7 failed for 301 s} and {@code ... 'b' seq 9 failed for 302 s}
 * are both {@code held too long: '…' seq … failed for … s}. A pure reading of the text and the letter's subject
 * headers, with no backend.
 *
 * <ol>
 *   <li>The subject at the end, {@code (entity 'e', seq 7)}, is taken off: the exact one the headers name where they
 *       name it (so an entity holding quotes or parentheses is taken whole), else one whose entity holds no quote.
 *   <li>The entity where the reason names it ({@code entity 'e'}, {@code 'e' seq}) becomes {@code '…'}: only there,
 *       so a field that happens to share the entity's name stays.
 *   <li>Every number standing on its own (a seq, a size, a duration, a value) becomes {@code …}.
 * </ol>
 */
final class ReasonShape {
    /** A subject at the end whose entity holds no quote: what is taken off when the headers name none. */
    private static final Pattern SUBJECT_AT_END = Pattern.compile(" \\((?:entity '[^']*'(?:, seq -?\\d+)?|seq -?\\d+)\\)$");
    /** A number not part of a word or of another number: {@code 7}, {@code -4}, {@code 2.5}; not {@code f1}. */
    private static final Pattern NUMBER = Pattern.compile("(?<![\\w.-])-?\\d+(?:\\.\\d+)?(?![\\w.])");

    private ReasonShape() {
    }

    /** {@code reason} with its subject taken off and what varies set aside (steps above). */
    static String of(String reason, Optional<String> entity, OptionalLong seq) {
        String shape = withoutSubject(reason, entity, seq);
        if (entity.isPresent() && !entity.get().isEmpty()) {
            for (String named : List.of(entity.get(), clipped(entity.get()))) {
                shape = shape.replace("entity '" + named + "'", "entity '…'").replace("'" + named + "' seq", "'…' seq");
            }
        }
        return NUMBER.matcher(shape).replaceAll(Matcher.quoteReplacement("…"));
    }

    /** {@code reason} without the {@code (entity 'e', seq 7)} at its end (step 1). */
    static String withoutSubject(String reason, Optional<String> entity, OptionalLong seq) {
        if (entity.isPresent()) {
            for (String named : List.of(entity.get(), clipped(entity.get()))) {
                String withSeq = seq.isPresent() ? " (entity '" + named + "', seq " + seq.getAsLong() + ")" : "";
                if (!withSeq.isEmpty() && reason.endsWith(withSeq)) {
                    return reason.substring(0, reason.length() - withSeq.length());
                }
                if (reason.endsWith(" (entity '" + named + "')")) {
                    return reason.substring(0, reason.length() - (" (entity '" + named + "')").length());
                }
            }
        }
        return SUBJECT_AT_END.matcher(reason).replaceFirst("");
    }

    private static String clipped(String entity) {
        return LetterSubject.clip(entity);
    }
}
