package dev.orderless.testing.chaos;

import java.util.HashMap;
import java.util.Map;

/**
 * Increasing seqs per entity, for a generator of operations: what a producer's stamper does, in memory. Not safe
 * to share between threads (a generator runs on one).
 *
 * <pre>
 * Stamps stamps = new Stamps();
 * Operation.add("order-7", stamps.next("order-7"), "lines", "sku-1");
 * </pre>
 */
public final class Stamps {
    private final Map<String, Long> last = new HashMap<>();

    /** The next seq of {@code entity}: 1, 2, 3, ... */
    public long next(String entity) {
        return last.merge(entity, 1L, Long::sum);
    }
}
