package dev.orderless.testing;

import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.SplittableRandom;
import java.util.function.Function;

/**
 * A small property-test runner: generates {@code tries} inputs from a seeded random source, checks each,
 * and on the first failure shrinks the input (by dropping elements of its list while it still fails) and
 * fails with the smallest failing input, the try number and the seed to reproduce it.
 *
 * <p>The seed comes from the system property {@code orderless.seed} when set (to replay a failure),
 * else it is drawn at random; it is printed either way.
 *
 * <p>The system property {@value #MIN_TRIES} raises every property's tries to at least that many: the
 * {@code soak} profile sets it, to run the property tests far longer than the test run does, outside CI.
 *
 * <p>Written here rather than taken from jqwik: from 1.10 jqwik's licence carries a usage clause.
 *
 * @param <T> one element of a generated input list
 */
public final class PropertyCheck<T> {
    /** System property: the fewest tries any property runs (the {@code soak} profile sets it). */
    public static final String MIN_TRIES = "orderless.minTries";

    /** The checked code: throws (an AssertionError, typically) when the property does not hold. */
    @FunctionalInterface
    public interface Check<T> {
        void verify(List<T> input, long trySeed) throws Exception;
    }

    private final String name;
    private final int tries;
    private final Function<Random, List<T>> generator;

    private PropertyCheck(String name, int tries, Function<Random, List<T>> generator) {
        this.name = name;
        this.tries = Math.max(tries, Integer.getInteger(MIN_TRIES, 0));
        this.generator = generator;
    }

    public static <T> PropertyCheck<T> forAll(String name, int tries, Function<Random, List<T>> generator) {
        return new PropertyCheck<>(name, tries, generator);
    }

    /** Runs every try; returns the seed used. */
    public long check(Check<T> check) {
        long seed = Long.getLong("orderless.seed", new SplittableRandom().nextLong());
        SplittableRandom seeds = new SplittableRandom(seed);
        for (int i = 1; i <= tries; i++) {
            long trySeed = seeds.nextLong();
            List<T> input = generator.apply(new Random(trySeed));
            Throwable failure = failureOf(check, input, trySeed);
            if (failure != null) {
                List<T> smallest = shrink(check, input, trySeed);
                AssertionError error = new AssertionError(String.format(
                        "property '%s' failed on try %d of %d; reproduce with -Dorderless.seed=%d%n"
                                + "smallest failing input (%d of %d elements): %s%n%s",
                        name, i, tries, seed, smallest.size(), input.size(), smallest,
                        failureOf(check, smallest, trySeed)));
                error.initCause(failure);
                throw error;
            }
        }
        System.out.printf("[property] %s: %d tries passed (seed %d)%n", name, tries, seed);
        return seed;
    }

    /** Drops one element at a time while the property still fails, until no single drop fails. */
    private static <T> List<T> shrink(Check<T> check, List<T> input, long trySeed) {
        List<T> current = new ArrayList<>(input);
        boolean smaller = true;
        while (smaller) {
            smaller = false;
            for (int i = 0; i < current.size(); i++) {
                List<T> candidate = new ArrayList<>(current);
                candidate.remove(i);
                if (!candidate.isEmpty() && failureOf(check, candidate, trySeed) != null) {
                    current = candidate;
                    smaller = true;
                    break;
                }
            }
        }
        return current;
    }

    private static <T> Throwable failureOf(Check<T> check, List<T> input, long trySeed) {
        try {
            check.verify(input, trySeed);
            return null;
        } catch (Exception | AssertionError e) {
            return e;
        }
    }
}
