/**
 * Producer side (to come): sequence stamping strategies (a MongoDB counter per entity, a hybrid
 * logical clock) and the confirming publisher.
 */
package dev.orderless.stamp;
