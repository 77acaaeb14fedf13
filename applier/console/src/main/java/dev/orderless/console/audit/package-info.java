/**
 * The console's record of what operators did: every action (replay, edit and replay, park, un-park, purge) with who,
 * when, which letters, how many and its outcome, refusals and failures included, kept in a MongoDB collection
 * ({@code orderless.console.audit}) that every instance writes to and every instance's page shows.
 */
package dev.orderless.console.audit;
