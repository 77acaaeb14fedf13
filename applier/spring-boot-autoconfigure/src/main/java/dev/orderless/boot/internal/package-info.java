/**
 * Not API: what the auto-configuration packages of this artifact share (reading orderless's options from
 * {@code orderless.*} properties). It may change in any release.
 */
package dev.orderless.boot.internal;
