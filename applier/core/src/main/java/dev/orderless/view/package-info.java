/**
 * The change-stream view feeder: one active feeder per view (or per segment of it) under a fenced lease,
 * feeding a denormalized view from the converged source documents. Guarantees: no source write is missed
 * (the stream is opened before a bootstrap scan; a lost resume position rebuilds, never restarts at now);
 * view writes are guarded by the source's version, so a paused former owner cannot overwrite newer data; a
 * poison event is dead-lettered or stops the feeder, as configured, never skipped in silence.
 */
package dev.orderless.view;
