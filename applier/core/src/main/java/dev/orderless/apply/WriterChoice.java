package dev.orderless.apply;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Which of a round's candidate writes {@link BatchApply} sends together in one bulk write, and what the rest
 * do meanwhile. A pure decision, with no backend.
 *
 * <p>Every write is guarded on its own slot (an element of a set, a register, or one increment of a counter), so writes of one entity on
 * different slots are right together in one bulk write, in any order. Writes on the same slot are not: the
 * lower seq would either fail (a wasted write and a read) or be overwritten at once. And a delete is guarded
 * on the whole document ({@code _v}), so it shares a round with no other write of its entity.
 *
 * <ol>
 *   <li>An entity with a delete among its candidates: the candidate with the highest seq writes; every other
 *       candidate of the entity waits for the next round (it is decided again from a fresh read).
 *   <li>Otherwise, per slot: the candidate with the highest seq writes. A candidate with a lower seq follows
 *       it: if that write is known to have matched, the slot now holds a higher seq and the follower is
 *       superseded without a write or a read; if not, it waits for the next round. A candidate with the same
 *       seq (the same operation delivered twice in one batch, or a seq collision) waits, so that a read decides
 *       which it is.
 * </ol>
 * Ties in seq go to the lowest index (the order of the batch).
 */
final class WriterChoice {
    private WriterChoice() {
    }

    /**
     * @param writers   indexes whose write goes in this round's bulk write
     * @param followers writer index to the indexes superseded if its write matched
     * @param waiting   indexes left for the next round, unwritten
     */
    record Choice(List<Integer> writers, Map<Integer, List<Integer>> followers, List<Integer> waiting) {
        List<Integer> followersOf(int writer) {
            return followers.getOrDefault(writer, List.of());
        }
    }

    /** Chooses among {@code candidates} (index to its op), iterated in batch order, for a schema without ranked registers. */
    static Choice choose(Map<Integer, Operation> candidates) {
        return choose(candidates, java.util.Set.of());
    }

    /** Chooses among {@code candidates}, where {@code ranked} names the schema's ranked registers. */
    static Choice choose(Map<Integer, Operation> candidates, java.util.Set<String> ranked) {
        Map<String, List<Integer>> byEntity = new LinkedHashMap<>();
        candidates.forEach((i, op) -> byEntity.computeIfAbsent(op.entity(), e -> new ArrayList<>()).add(i));
        List<Integer> writers = new ArrayList<>();
        Map<Integer, List<Integer>> followers = new LinkedHashMap<>();
        List<Integer> waiting = new ArrayList<>();
        Comparator<Integer> first = Comparator.<Integer>comparingLong(i -> candidates.get(i).seq()).reversed()
                .thenComparing(Comparator.naturalOrder());
        for (List<Integer> ofEntity : byEntity.values()) {
            if (ofEntity.stream().anyMatch(i -> candidates.get(i) instanceof Operation.Delete)) {
                List<Integer> sorted = ofEntity.stream().sorted(first).toList();
                writers.add(sorted.get(0));
                waiting.addAll(sorted.subList(1, sorted.size()));
                continue;
            }
            Map<String, List<Integer>> bySlot = new LinkedHashMap<>();
            ofEntity.forEach(i -> bySlot.computeIfAbsent(slot(candidates.get(i), ranked), s -> new ArrayList<>()).add(i));
            for (List<Integer> ofSlot : bySlot.values()) {
                List<Integer> sorted = ofSlot.stream().sorted(first).toList();
                int writer = sorted.get(0);
                writers.add(writer);
                long top = candidates.get(writer).seq();
                for (int i : sorted.subList(1, sorted.size())) {
                    if (candidates.get(i).seq() < top) {
                        followers.computeIfAbsent(writer, w -> new ArrayList<>()).add(i);
                    } else {
                        waiting.add(i);
                    }
                }
            }
        }
        writers.sort(Comparator.naturalOrder());
        return new Choice(writers, followers, waiting);
    }

    /** The part of its entity an op's guard and write touch; a delete touches all of it and is never asked. */
    static String slot(Operation op) {
        return slot(op, java.util.Set.of());
    }

    static String slot(Operation op, java.util.Set<String> ranked) {
        if (op instanceof Operation.Add add) {
            return "set\u0000" + add.field() + "\u0000" + add.element();
        }
        if (op instanceof Operation.Remove remove) {
            return "set\u0000" + remove.field() + "\u0000" + remove.element();
        }
        if (op instanceof Operation.Assign assign) {
            // a plain register's lower seq is superseded by a higher one; a ranked register's is not (it may
            // outrank it), so each ranked assignment is a slot of its own, like an increment
            return "register\u0000" + assign.field() + (ranked.contains(assign.field()) ? "\u0000" + assign.seq() : "");
        }
        if (op instanceof Operation.Increment increment) {
            // each increment is guarded on its own seq, so increments of one counter write together; the same
            // seq twice shares a slot, so that a read tells a duplicate from a collision
            return "counter\u0000" + increment.field() + "\u0000" + increment.seq();
        }
        return "entity";
    }
}
