package dev.orderless.apply;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * What one bulk write of {@link BatchApply} tells of each op it carried, from each statement's own result and the
 * command's matched count. A pure decision, with no backend.
 *
 * <p>An op sends one or more statements: its writes (a set element's move and refresh in place side by side, at
 * most one of which can match), or one compare-and-set whose match only the command's count tells ({@link
 * Kind#COUNTED}, at most one per command), and maybe a probe that changes nothing and matches where the op is
 * superseded. For each op, the first that holds:
 * <ol>
 *   <li>One of its writes matched or inserted: {@link Verdict#APPLIED}.
 *   <li>Its probe matched: {@link Verdict#SUPERSEDED}.
 *   <li>One of its writes failed otherwise than by matching nothing: {@link Verdict#OWN_ERROR} (applied on its own,
 *       which classifies the error).
 *   <li>Its compare-and-set raised no error: {@link Verdict#APPLIED} if the command matched more than its other
 *       statements did (the count beyond theirs is its own), else {@link Verdict#MISSED}.
 *   <li>Otherwise: {@link Verdict#MISSED} (a read decides). A probe that failed, whatever the error, tells nothing.
 * </ol>
 */
final class BulkVerdicts {
    private BulkVerdicts() {
    }

    /** What a statement is to its op. */
    enum Kind {
        /** A guarded write, whose miss is its own write error. */
        WRITE,
        /** A compare-and-set on {@code _v}, a plain update: only the command's matched count tells its match. */
        COUNTED,
        /** A statement that writes nothing and matches where its op is superseded. */
        PROBE
    }

    /** A statement's own result in the command. */
    enum Result {
        /** No error, nothing inserted: a write or probe matched; a compare-and-set, matched or not. */
        OK,
        /** No error, and a document inserted (an upsert that matched nothing). */
        INSERTED,
        /** Its own error meaning "matched nothing" (a duplicate {@code _id}, a position not found, ...). */
        MISSED,
        /** Any other error of its own. */
        FAILED
    }

    /** What an op's statements tell. */
    enum Verdict { APPLIED, SUPERSEDED, OWN_ERROR, MISSED }

    /** One statement of the command: whose, and what it is to that op. */
    record Statement(int op, Kind kind) {
    }

    /**
     * @param statements   the command's statements, in order
     * @param results      each statement's result, in the same order
     * @param matchedCount the command's matched count
     * @return each op's verdict, in the order of its first statement
     */
    static Map<Integer, Verdict> of(List<Statement> statements, List<Result> results, int matchedCount) {
        if (statements.size() != results.size()) {
            throw new IllegalArgumentException(statements.size() + " statements but " + results.size() + " results");
        }
        Map<Integer, Verdict> verdicts = new LinkedHashMap<>();
        int othersMatched = 0;                 // matches the count holds beside the compare-and-set's
        Integer counted = null;
        for (int k = 0; k < statements.size(); k++) {
            Statement statement = statements.get(k);
            Result result = results.get(k);
            verdicts.putIfAbsent(statement.op(), Verdict.MISSED);
            othersMatched += result == Result.OK && statement.kind() != Kind.COUNTED ? 1 : 0;
            if (statement.kind() == Kind.COUNTED && result == Result.OK) {
                if (counted != null && counted != statement.op()) {
                    throw new IllegalArgumentException("two compare-and-sets in one command: ops " + counted + " and "
                            + statement.op() + " (a matched count cannot say whose)");
                }
                counted = statement.op();
            }
            Verdict now = switch (statement.kind()) {
                case WRITE -> result == Result.OK || result == Result.INSERTED ? Verdict.APPLIED
                        : result == Result.FAILED ? Verdict.OWN_ERROR : Verdict.MISSED;
                case COUNTED -> result == Result.FAILED ? Verdict.OWN_ERROR : Verdict.MISSED;
                case PROBE -> result == Result.OK ? Verdict.SUPERSEDED : Verdict.MISSED;
            };
            verdicts.merge(statement.op(), now, BulkVerdicts::firstThatHolds);
        }
        if (counted != null && verdicts.get(counted) == Verdict.MISSED && matchedCount - othersMatched >= 1) {
            verdicts.put(counted, Verdict.APPLIED);
        }
        return verdicts;
    }

    /** The verdict that comes first in the class's order: applied, superseded, own error, missed. */
    private static Verdict firstThatHolds(Verdict a, Verdict b) {
        return a.ordinal() <= b.ordinal() ? a : b;
    }
}
