/**
 * Leases in MongoDB with fencing: at most one owner of a resource at a time, an owner's term numbered by a
 * fence that rises with every change of owner and never goes back (the lease document is never deleted), a
 * lost lease seen at the next renewal or guarded write. Correctness rests on the fence, never on clocks:
 * skewed clocks cost time, not data.
 */
package dev.orderless.lease;
