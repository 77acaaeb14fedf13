/**
 * For tests: the MongoDB a test talks to, chosen in one place ({@link dev.orderless.backends.Backends}):
 * {@code MONGODB_URI}, a replica set in a container, or mongo-java-server in the JVM (with an indexed oplog
 * whose change streams read neither the whole oplog nor the whole collection, and an {@code _id} lookup
 * that keeps a guarded write from scanning the collection).
 * {@link dev.orderless.backends.KnownDifference} names where the embedded server differs from MongoDB.
 */
package dev.orderless.backends;
