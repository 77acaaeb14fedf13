/**
 * Spring Boot auto-configuration of the outbox and its relay, with {@code orderless.outbox.enabled=true},
 * and its health: DOWN when full, when the oldest entry waited its max-wait, or when the relay failed.
 */
package dev.orderless.outbox.boot;
