/**
 * Compaction on a schedule: at most one pass per interval across every process, under a lease, each pass
 * recorded before it starts so that a crash does not make the next process run it again at once.
 */
package dev.orderless.compaction;
