/**
 * Not API: what orderless's own packages and artifacts share (how a MongoDB error is classified). It may
 * change in any release; do not use it from an application.
 */
package dev.orderless.internal;
