/**
 * Spring Boot auto-configuration of the stamping publisher, where orderless-producer-stamping is on the
 * class path and the connection factory has correlated confirms.
 */
package dev.orderless.publish.boot;
