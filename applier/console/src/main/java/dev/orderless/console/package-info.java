/**
 * The operator console: one page in the application's own web server, off unless
 * {@code orderless.console.enabled=true}, answering three questions fast: is anything stuck (consumers, view feeders,
 * the outbox and scheduled passes, refreshed live, of this instance and of every instance of the fleet, with each
 * work queue's backlog and a banner of what is wrong now: {@link dev.orderless.console.fleet}), what was dead-lettered and why (grouped by reason, with replay,
 * park and purge), and why a document looks as it does (its live document and, with history on, its versions).
 *
 * <p>What it guarantees:
 * <ul>
 *   <li>It reads live: every figure is read when asked, from the running consumers, feeders and MongoDB; nothing
 *       is reported running whose thread has stopped.
 *   <li>It changes nothing unless asked by a user with the action role ({@code orderless.console.action-role}),
 *       in a POST that carries the console's own header (a cross-site form cannot) and, under Spring Security, its
 *       CSRF token; anything else answers 403 and changes nothing.
 *   <li>What it shows from documents and messages is text, never markup: the page builds its elements and sets
 *       their text, and its content security policy allows no script but its own.
 *   <li>It works offline: its page, script and styles are inside the jar.
 * </ul>
 * {@link dev.orderless.console.ConsoleSources} is what it shows; the auto-configuration builds it from a Spring Boot
 * application's orderless beans.
 */
package dev.orderless.console;
