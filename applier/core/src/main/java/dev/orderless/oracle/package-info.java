/**
 * The reference semantics as a plain in-memory model: {@link dev.orderless.oracle.ReferenceModel} applies an
 * entity's operations one at a time in seq order, each once. Every convergence test compares the stored
 * documents with it; an application can check its own documents the same way.
 */
package dev.orderless.oracle;
