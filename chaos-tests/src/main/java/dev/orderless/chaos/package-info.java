/** End-to-end chaos suite and benchmark (to come). */
package dev.orderless.chaos;
