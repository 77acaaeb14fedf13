package dev.orderless.testing.chaos;

import dev.orderless.apply.Operation;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.function.Predicate;

/**
 * The pure part of shrinking: given a delivery that breaks and a test of whether one does, the smallest delivery
 * it finds that still breaks. No backend: {@link Shrinker} gives it trials through the team's consumer.
 *
 * <ol>
 *   <li>Fewer messages (delta debugging): drop chunks, halves first, then quarters, down to single messages, while
 *       what is left still breaks.
 *   <li>A smaller delivery order: swap neighbours delivered out of seq order while it still breaks, so that what is
 *       left out of order is what the break needs.
 * </ol>
 * At most {@code maxTrials} tests; the smallest found so far is the answer.
 */
final class Minimizer {
    private final Predicate<List<Operation>> breaks;
    private final int maxTrials;
    private int trials;

    Minimizer(Predicate<List<Operation>> breaks, int maxTrials) {
        this.breaks = breaks;
        this.maxTrials = maxTrials;
    }

    /** How many tests it made. */
    int trials() {
        return trials;
    }

    /** The smallest breaking delivery found from {@code breaking} (which breaks). */
    List<Operation> minimize(List<Operation> breaking) {
        return inOrder(fewer(breaking));
    }

    private List<Operation> fewer(List<Operation> breaking) {
        int chunks = 2;
        while (breaking.size() >= 2 && trials < maxTrials) {
            int size = (int) Math.ceil(breaking.size() / (double) chunks);
            boolean dropped = false;
            for (int from = 0; from < breaking.size() && trials < maxTrials; from += size) {
                List<Operation> rest = new ArrayList<>(breaking.subList(0, from));
                rest.addAll(breaking.subList(Math.min(breaking.size(), from + size), breaking.size()));
                if (!rest.isEmpty() && test(rest)) {
                    breaking = rest;
                    chunks = Math.max(chunks - 1, 2);
                    dropped = true;
                    break;
                }
            }
            if (!dropped) {
                if (size == 1) {
                    break;
                }
                chunks = Math.min(chunks * 2, breaking.size());
            }
        }
        return breaking;
    }

    private List<Operation> inOrder(List<Operation> breaking) {
        boolean swapped = true;
        for (int pass = 0; swapped && pass < breaking.size() && trials < maxTrials; pass++) {
            swapped = false;
            for (int i = 0; i + 1 < breaking.size() && trials < maxTrials; i++) {
                if (breaking.get(i).seq() > breaking.get(i + 1).seq()) {
                    List<Operation> candidate = new ArrayList<>(breaking);
                    Collections.swap(candidate, i, i + 1);
                    if (test(candidate)) {
                        breaking = candidate;
                        swapped = true;
                    }
                }
            }
        }
        return breaking;
    }

    private boolean test(List<Operation> delivery) {
        trials++;
        return breaks.test(delivery);
    }
}
