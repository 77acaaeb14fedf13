package dev.orderless.publish.internal;

import dev.orderless.apply.Operation;
import dev.orderless.publish.BrokerBlockedException;
import dev.orderless.publish.PublishFailedException;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Consumer;

/** Publishing window by window: once one fails, the windows after it are reported as not sent, never as taken. */
public final class Windows {
    private Windows() {
    }

    /**
     * Hands {@code outgoing} to {@code publishWindow} {@code window} at a time (each a list of its own); a
     * {@link PublishFailedException} of one window is rethrown with the operations of every later window added
     * (a {@link BrokerBlockedException} stays one).
     */
    public static void publish(List<Outgoing> outgoing, int window, Consumer<List<Outgoing>> publishWindow) {
        for (int from = 0; from < outgoing.size(); from += window) {
            int to = Math.min(outgoing.size(), from + window);
            try {
                publishWindow.accept(new ArrayList<>(outgoing.subList(from, to)));
            } catch (PublishFailedException e) {
                if (to == outgoing.size()) {
                    throw e;
                }
                throw withUnsent(e, outgoing.subList(to, outgoing.size()));
            }
        }
    }

    private static PublishFailedException withUnsent(PublishFailedException e, List<Outgoing> unsent) {
        List<Operation> failed = new ArrayList<>(e.failed());
        failed.addAll(Outgoing.ops(unsent));
        String message = e.getMessage() + "; the " + unsent.size() + " operation(s) after that window were not sent";
        return e instanceof BrokerBlockedException b
                ? new BrokerBlockedException(b.brokerReason(), message, failed)
                : new PublishFailedException(message, failed, e.refused());
    }
}
