/**
 * Dead letters kept in MongoDB for the console (docs/decisions/0009-letters-kept-in-mongodb.md): each consumer's
 * dead-letter queue is moved into one collection as letters arrive ({@link dev.orderless.console.letters.LetterIngestion}),
 * where they are searched by queue, kind, reason, entity, age and status ({@link dev.orderless.console.letters.LetterStore})
 * and replayed, edited and replayed, parked, un-parked and purged one by one or by the thousand
 * ({@link dev.orderless.console.letters.LetterActions}), each action on record in the audit.
 *
 * <p>What it guarantees:
 * <ul>
 *   <li>Nothing is lost: a letter leaves its queue only once MongoDB stored it; one too large to store is moved, with
 *       confirms, to the parking queue first, and stored without its body saying where it is.
 *   <li>Nothing is doubled: a letter stored twice (taken again after a stop between store and ack) is one letter.
 *   <li>Readers see the same letters: reading takes nothing out of anyone else's sight.
 *   <li>A replay is at least once and the guard absorbs a copy; it refuses a letter older than the tombstone grace, and
 *       an edited body the envelope reader refuses.
 * </ul>
 */
package dev.orderless.console.letters;
