package dev.orderless.publish;

/**
 * What the publisher does once every confirm of a window was awaited (or its time ran out).
 *
 * <ol>
 *   <li>Everything taken and nothing refused: {@link #DONE}.
 *   <li>Nothing left but refused messages (the messages themselves, not the broker): {@link #REFUSED_ONLY};
 *       sending them again would fail the same way.
 *   <li>Some not taken while the broker says it blocks publishers: {@link #BLOCKED}; re-sending into the
 *       block cannot help within this call.
 *   <li>Some not taken after the last attempt: {@link #GIVE_UP}, naming them.
 *   <li>Else {@link #RESEND} what was not taken, after the back-off.
 * </ol>
 */
enum WindowVerdict {
    DONE, REFUSED_ONLY, BLOCKED, GIVE_UP, RESEND;

    static WindowVerdict after(int notTaken, int refused, boolean blocked, int attempt, int maxAttempts) {
        if (notTaken == 0) {
            return refused == 0 ? DONE : REFUSED_ONLY;
        }
        if (blocked) {
            return BLOCKED;
        }
        return attempt >= maxAttempts ? GIVE_UP : RESEND;
    }
}
