package dev.orderless.testing.chaos;

import dev.orderless.apply.Operation;
import java.util.List;
import java.util.Random;

/**
 * A team's operations, as its producers send them: {@code count} operations in the order they were stamped, drawn
 * from {@code random} only (so that a seed gives the same history again). Stamp them with {@link Stamps}.
 */
@FunctionalInterface
public interface OperationGenerator {
    /**
     * Draws the operations.
     *
     * @param random the run's draws, from its seed: the only source of chance
     * @param count  how many operations to return
     * @return {@code count} operations, in the order their producers stamped them
     */
    List<Operation> generate(Random random, int count);
}
