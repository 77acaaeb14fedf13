package dev.orderless.view;

import dev.orderless.apply.Operation;
import java.util.Arrays;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.function.Predicate;

/**
 * What one term last projected from each source document: the version, and which elements it placed in
 * which array. Two uses, both about cost only:
 * <ol>
 *   <li>A version already projected is skipped (under full-document lookup a burst of events for one
 *       document all carry its latest version).
 *   <li>The next version's writes are hinted: an element the previous version added (or removed) is
 *       probably in the view's live array (or tombstones) already, so its first write is the in-place
 *       refresh ({@link dev.orderless.apply.GuardedApplier#applyAll(List, Predicate)}).
 * </ol>
 * Bounded to the most recently used {@value #MAX_SOURCES} sources and {@value #MAX_ELEMENTS} elements in
 * all (8 bytes each); forgetting one costs a re-projection or a read, never a wrong view. Elements are kept as 64-bit hashes of (kind, view document, field,
 * element): a collision costs the read a wrong hint costs. Confined to the term's thread.
 */
final class LastProjections {
    static final int MAX_SOURCES = 100_000;
    static final int MAX_ELEMENTS = 1_000_000;
    private static final long[] NONE = new long[0];

    private record Last(long version, long[] placed) {
    }

    /** In access order: the first entry is the least recently used. */
    private final Map<String, Last> bySource = new LinkedHashMap<>(1024, 0.75f, true);
    private long elements;

    /** The version last projected from {@code source}, if this term remembers it. */
    OptionalLong version(String source) {
        Last last = bySource.get(source);
        return last == null ? OptionalLong.empty() : OptionalLong.of(last.version());
    }

    /** The hint for {@code source}'s next writes: the ops whose element its last projection placed the same way. */
    Predicate<Operation> placedBefore(String source) {
        Last last = bySource.get(source);
        if (last == null || last.placed().length == 0) {
            return op -> false;
        }
        long[] placed = last.placed();
        return op -> {
            long key = key(op);
            return key != 0 && Arrays.binarySearch(placed, key) >= 0;
        };
    }

    /** {@code source} at {@code version} was projected to {@code ops} (empty if it ended dead-lettered). */
    void projected(String source, long version, List<Operation> ops) {
        long[] placed = ops.stream().mapToLong(LastProjections::key).filter(k -> k != 0).sorted().distinct().toArray();
        if (placed.length == 0 || placed.length > MAX_ELEMENTS / 10) {
            placed = NONE;   // a source that feeds a tenth of the bound alone is not worth the memory
        }
        forget(source);
        bySource.put(source, new Last(version, placed));
        elements += placed.length;
        Iterator<Map.Entry<String, Last>> eldest = bySource.entrySet().iterator();
        while (bySource.size() > MAX_SOURCES || elements > MAX_ELEMENTS) {
            elements -= eldest.next().getValue().placed().length;
            eldest.remove();
        }
    }

    void forget(String source) {
        Last last = bySource.remove(source);
        if (last != null) {
            elements -= last.placed().length;
        }
    }

    /** 0 for an op that places no element (an assign's first write is one round trip already). */
    private static long key(Operation op) {
        if (op instanceof Operation.Add add) {
            return hash('+', add.entity(), add.field(), add.element());
        }
        if (op instanceof Operation.Remove remove) {
            return hash('-', remove.entity(), remove.field(), remove.element());
        }
        return 0;
    }

    /** 64-bit FNV-1a over the parts, each followed by U+FFFF (a noncharacter) as a separator. */
    private static long hash(char kind, String entity, String field, String element) {
        long h = 0xcbf29ce484222325L;
        h = mix(h, kind);
        for (String part : new String[] {entity, field, element}) {
            for (int i = 0; i < part.length(); i++) {
                h = mix(h, part.charAt(i));
            }
            h = mix(h, 0xFFFF);
        }
        return h == 0 ? 1 : h;
    }

    private static long mix(long h, int c) {
        return (h ^ c) * 0x100000001b3L;
    }
}
