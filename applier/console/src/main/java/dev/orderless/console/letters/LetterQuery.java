package dev.orderless.console.letters;

import dev.orderless.InvalidInputException;
import java.time.Duration;
import java.util.List;
import java.util.Optional;

/**
 * Which stored letters: every part given narrows the choice; none given is every letter of {@code statuses}.
 *
 * @param ids      these letters only (empty: any)
 * @param queue    of this work queue
 * @param kind     of this kind, exactly as letters carry it
 * @param reason   whose reason holds this text, in any case
 * @param entity   naming exactly this entity
 * @param minAge   dead-lettered at least this long ago
 * @param maxAge   dead-lettered at most this long ago
 * @param statuses in one of these statuses (empty: any)
 */
public record LetterQuery(List<String> ids, Optional<String> queue, Optional<String> kind, Optional<String> reason,
                          Optional<String> entity, Optional<Duration> minAge, Optional<Duration> maxAge,
                          List<LetterStatus> statuses) {
    /** The most ids one query takes. */
    public static final int MAX_IDS = 1_000;

    /** Refuses nulls, too many ids, a negative age and a minimum age above the maximum, naming the parameter. */
    public LetterQuery {
        if (ids == null || queue == null || kind == null || reason == null || entity == null || minAge == null
                || maxAge == null || statuses == null) {
            throw new InvalidInputException("letter query: every part must be given (Optional.empty() or an empty list"
                    + " for none)");
        }
        ids = List.copyOf(ids);
        statuses = List.copyOf(statuses);
        if (ids.size() > MAX_IDS) {
            throw new InvalidInputException("ids: at most " + MAX_IDS + " letters at once, were " + ids.size());
        }
        for (Optional<Duration> age : List.of(minAge, maxAge)) {
            if (age.isPresent() && age.get().isNegative()) {
                throw new InvalidInputException("an age must not be negative, was " + age.get());
            }
        }
        if (minAge.isPresent() && maxAge.isPresent() && minAge.get().compareTo(maxAge.get()) > 0) {
            throw new InvalidInputException("minAge " + minAge.get() + " is above maxAge " + maxAge.get()
                    + ": no letter can be both");
        }
    }

    /** @return the letters waiting: every {@link LetterStatus#DEAD} letter */
    public static LetterQuery dead() {
        return new LetterQuery(List.of(), Optional.empty(), Optional.empty(), Optional.empty(), Optional.empty(),
                Optional.empty(), Optional.empty(), List.of(LetterStatus.DEAD));
    }

    /** @return these letters, whatever their status */
    public static LetterQuery ids(List<String> ids) {
        return new LetterQuery(ids, Optional.empty(), Optional.empty(), Optional.empty(), Optional.empty(),
                Optional.empty(), Optional.empty(), List.of());
    }

    public LetterQuery withQueue(String queue) {
        return new LetterQuery(ids, Optional.of(queue), kind, reason, entity, minAge, maxAge, statuses);
    }

    public LetterQuery withKind(String kind) {
        return new LetterQuery(ids, queue, Optional.of(kind), reason, entity, minAge, maxAge, statuses);
    }

    public LetterQuery withReason(String reason) {
        return new LetterQuery(ids, queue, kind, Optional.of(reason), entity, minAge, maxAge, statuses);
    }

    public LetterQuery withEntity(String entity) {
        return new LetterQuery(ids, queue, kind, reason, Optional.of(entity), minAge, maxAge, statuses);
    }

    public LetterQuery withMinAge(Duration minAge) {
        return new LetterQuery(ids, queue, kind, reason, entity, Optional.of(minAge), maxAge, statuses);
    }

    public LetterQuery withMaxAge(Duration maxAge) {
        return new LetterQuery(ids, queue, kind, reason, entity, minAge, Optional.of(maxAge), statuses);
    }

    /** @return this query over letters in one of {@code statuses} (none: any status) */
    public LetterQuery withStatuses(List<LetterStatus> statuses) {
        return new LetterQuery(ids, queue, kind, reason, entity, minAge, maxAge, statuses);
    }

    /** What it chooses, in words, for the audit and the result line. */
    public String describe() {
        StringBuilder text = new StringBuilder();
        if (!ids.isEmpty()) {
            text.append(ids.size() == 1 ? "letter " + ids.get(0) : ids.size() + " chosen letters");
        } else {
            text.append(statuses.isEmpty() ? "letters" : statuses.stream().map(LetterStatus::stored)
                    .collect(java.util.stream.Collectors.joining("/")) + " letters");
        }
        queue.ifPresent(q -> text.append(" of queue ").append(q));
        kind.ifPresent(k -> text.append(" of kind ").append(k));
        reason.ifPresent(r -> text.append(" whose reason holds '").append(r).append("'"));
        entity.ifPresent(e -> text.append(" of entity '").append(e).append("'"));
        minAge.ifPresent(a -> text.append(" older than ").append(a));
        maxAge.ifPresent(a -> text.append(" younger than ").append(a));
        return text.toString();
    }
}
