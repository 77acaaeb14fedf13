package dev.orderless.demo.compare;

/**
 * Consumer CPU per message: the CPU time the consumers spent over the messages they settled in the same stretch.
 * On a real MongoDB the server's work moves off this machine, but this stays: what the consumer itself spends to
 * apply a message (decode, plan, encode its statements, read the replies).
 *
 * @param cpuNanos CPU time of the consumers' threads, ns
 * @param messages messages they settled
 */
public record CpuPerMessage(long cpuNanos, long messages) {
    /** Nothing measured: NaN µs per message. */
    public static final CpuPerMessage NONE = new CpuPerMessage(0, 0);

    /** Refuses a negative figure, naming it. */
    public CpuPerMessage {
        if (cpuNanos < 0) {
            throw new IllegalArgumentException("cpuNanos must not be negative, was " + cpuNanos);
        }
        if (messages < 0) {
            throw new IllegalArgumentException("messages must not be negative, was " + messages);
        }
    }

    /** µs of consumer CPU per message; NaN if no message was settled. */
    public double micros() {
        return messages == 0 ? Double.NaN : cpuNanos / 1e3 / messages;
    }
}
