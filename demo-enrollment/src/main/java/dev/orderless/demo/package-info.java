/** The runnable enrollment demo (to come): students, classes, and the class-rosters view. */
package dev.orderless.demo;
