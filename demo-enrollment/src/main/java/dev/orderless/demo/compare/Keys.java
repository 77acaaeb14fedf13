package dev.orderless.demo.compare;

import java.util.Arrays;
import java.util.Random;

/**
 * Which student acts next: uniformly over {@code students}, or Zipf-skewed (a few students take a large
 * share: with s = 1.1 over 100k students the hottest takes 13 % of the actions and the ten hottest 36 %).
 *
 * <p>Zipf: P(rank k) is proportional to 1 / k^s; the cumulative weights are built once and a draw is a
 * binary search in them.
 */
record Keys(String name, int students, double s) {
    Keys {
        if (students < 1) {
            throw new IllegalArgumentException("students must be at least 1, was " + students);
        }
        if (s < 0) {
            throw new IllegalArgumentException("s must not be negative, was " + s);
        }
    }

    static Keys uniform(int students) {
        return new Keys("uniform", students, 0);
    }

    static Keys zipf(int students, double s) {
        return new Keys("zipf", students, s);
    }

    /** A sampler of student ranks 0 .. students - 1. */
    Sampler sampler(Random random) {
        if (s == 0) {
            return () -> random.nextInt(students);
        }
        double[] cumulative = new double[students];
        double total = 0;
        for (int k = 0; k < students; k++) {
            total += 1 / Math.pow(k + 1, s);
            cumulative[k] = total;
        }
        double sum = total;
        return () -> {
            int i = Arrays.binarySearch(cumulative, random.nextDouble() * sum);
            return Math.min(students - 1, i >= 0 ? i : -i - 1);
        };
    }

    interface Sampler {
        int next();
    }
}
