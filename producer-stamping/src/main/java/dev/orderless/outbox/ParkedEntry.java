package dev.orderless.outbox;

import java.time.Instant;

/**
 * An outbox entry set aside because no relay can publish it: kept, with why, until an operator retries
 * it ({@link ParkedEntries#retry}) or drops it ({@link ParkedEntries#purge}).
 *
 * @param id       the entry's id (24 hex characters), for retrying or dropping this one
 * @param entity   the operation's entity
 * @param seq      the operation's seq
 * @param recordedAt when it was recorded (to the second): an action parked for longer than the consumers'
 *                 tombstone grace may arrive beyond the horizon if retried, and be dead-lettered as such
 * @param reason   why it was parked
 * @param parkedAt when
 * @param tries    how many times relays claimed it
 */
public record ParkedEntry(String id, String entity, long seq, Instant recordedAt, String reason, Instant parkedAt,
                          int tries) {
}
