/**
 * orderless on Kafka share groups (KIP-932): records applied through the guarded apply in any order, a record
 * accepted only after MongoDB acknowledged its write, poison written to a dead-letter topic before it is rejected.
 */
package dev.orderless.kafka;
