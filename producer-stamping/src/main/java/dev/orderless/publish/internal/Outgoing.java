package dev.orderless.publish.internal;

import dev.orderless.apply.Operation;
import dev.orderless.message.Envelope;
import dev.orderless.publish.MessageIds;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Optional;

/**
 * One message to send: its id (the operation's message id, or {@code raw-<i>}), its body, and the operation it
 * carries (none for raw bodies).
 */
public record Outgoing(String id, byte[] body, Optional<Operation> op) {

    /** The operations as canonical envelopes, each with its message id. */
    public static List<Outgoing> of(List<? extends Operation> ops, Envelope envelope) {
        List<Outgoing> outgoing = new ArrayList<>(ops.size());
        ops.forEach(op -> outgoing.add(new Outgoing(MessageIds.of(op), envelope.encode(op), Optional.of(op))));
        return outgoing;
    }

    /** Bodies exactly as given (tools and tests: a demo that also sends bad input). */
    public static List<Outgoing> raw(List<byte[]> bodies) {
        List<Outgoing> outgoing = new ArrayList<>(bodies.size());
        for (int i = 0; i < bodies.size(); i++) {
            outgoing.add(new Outgoing("raw-" + i, bodies.get(i), Optional.empty()));
        }
        return outgoing;
    }

    /** The operations the messages carry (raw bodies carry none). */
    public static List<Operation> ops(List<Outgoing> outgoing) {
        return outgoing.stream().map(Outgoing::op).flatMap(Optional::stream).filter(Objects::nonNull).toList();
    }

    @Override
    public String toString() {
        return op.map(Operation::toString).orElse(id);
    }
}
