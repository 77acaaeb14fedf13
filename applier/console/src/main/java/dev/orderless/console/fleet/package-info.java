/**
 * The whole fleet in the console: each instance reports itself to one MongoDB collection, and any instance's page
 * shows them all, each work queue's backlog, and one banner of what is wrong now.
 *
 * <p>What it guarantees:
 * <ul>
 *   <li>One definition of an instance's figures ({@link dev.orderless.console.fleet.InstanceSnapshot}): the overview
 *       of the instance serving the page and the report every instance writes are the same computation.
 *   <li>Each instance reports every {@code orderless.console.fleet.interval}
 *       ({@link dev.orderless.console.fleet.FleetReporter}), on one daemon thread that never ends by a failure and
 *       says a failing streak in one WARN line naming the collection; a clean stop writes a goodbye, so the instance
 *       is shown {@code STOPPED} at once; an instance silent for three of its intervals without one is shown
 *       {@code GONE}, judged by the reader's clock; a report is dropped a day after it was last written (TTL index).
 *   <li>The backlog ({@link dev.orderless.console.fleet.Backlog}) tells a queue the broker says is absent from a
 *       broker that does not answer; either is one row's {@code error}, and every other row still answers, within
 *       seconds.
 *   <li>The banner is a pure function of the reports, the reader's time and the letters' figures: worst first, each
 *       problem one line naming the thing (queue, view, instance) and what to check, with the page's route to it.
 *   <li>Where an instance runs no web server, {@code orderless.console.fleet.report=true} reports it
 *       ({@link dev.orderless.console.fleet.FleetAutoConfiguration}).
 * </ul>
 * The stored letters' figures (the backlog's {@code letters} and {@code parked}, the banner's letters arriving and
 * ingestion waiting) come through {@link dev.orderless.console.fleet.LetterFigures}, which knows nothing until the
 * console's letter store provides it.
 */
package dev.orderless.console.fleet;
