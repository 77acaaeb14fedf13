package dev.orderless.consume.internal;

import dev.orderless.apply.BatchResult;
import dev.orderless.apply.Operation;
import io.micrometer.observation.Observation;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Batch mode: the deliveries a consumer took together (up to the consumer's batch size)
 * applied with one {@link dev.orderless.apply.GuardedApplier#applyAll}, each settled on its own. Every message
 * ends as in the per-message mode ({@link ApplyingHandler}), which it reuses:
 *
 * <ol>
 *   <li>Too large or undecodable: dead-lettered, as {@link ApplyingHandler} does.
 *   <li>The rest: one {@code applyAll} (with the history on, recorded first with one insert). An outcome is
 *       accepted (or dead-lettered beyond the horizon); a refusal is dead-lettered with its reason; each
 *       acceptance follows MongoDB's acknowledgement of the bulk write and of any writes after it.
 *   <li>A message that failed (transient, or a configuration refusal) takes the per-message path, with
 *       its pauses, its hold clock and {@link HandlerSettings#maxHold()}: one slow
 *       message never holds the others of its batch, which are settled first.
 *   <li>Stopping before the apply hands the whole batch back.
 * </ol>
 */
public final class BatchApplyingHandler {
    private static final Logger log = LoggerFactory.getLogger(BatchApplyingHandler.class);

    private final ApplyingHandler single;

    public BatchApplyingHandler(ApplyingHandler single) {
        this.single = single;
    }

    /** What becomes of a message of the batch that failed (transiently, or a configuration refusal). */
    public interface Holder {
        void hold(Delivery delivery, Operation op) throws IOException;

        /**
         * Called once the batch is decoded (its poison dead-lettered) and before its bulk write, which may block for
         * as long as MongoDB takes to answer: Kafka sends the acknowledgements settled so far, while their locks hold.
         */
        default void beforeApply() {
        }
    }

    /** Decodes, applies and settles the deliveries a consumer took together (see the class comment). */
    public void handle(List<? extends Delivery> messages) {
        handle(messages, single::applyHolding);
    }

    /**
     * As {@link #handle(List)}, but a message that failed goes to {@code holder} (a consumer that holds it itself
     * between attempts: Kafka's) instead of the per-message path's loop.
     */
    public void handle(List<? extends Delivery> messages, Holder holder) {
        ConsumeObservations observations = single.observations();
        List<Delivery> decoded = new ArrayList<>();
        List<Operation> ops = new ArrayList<>();
        List<Observation> observed = new ArrayList<>();
        try {
            for (Delivery message : messages) {
                Observation observation = observations.consume(message);
                Optional<Operation> op;
                try (Observation.Scope scope = observation.openScope()) {
                    op = single.decode(message);
                } catch (RuntimeException e) {
                    observation.error(e);
                    observation.stop();
                    throw e;
                }
                if (op.isPresent()) {
                    decoded.add(message);
                    ops.add(op.get());
                    observed.add(observation);
                } else {
                    observation.stop();
                }
            }
            if (ops.isEmpty()) {
                return;
            }
            if (single.stopping()) {
                for (int i = 0; i < ops.size(); i++) {
                    int at = i;
                    in(observed.get(i), () -> single.requeue(decoded.get(at), ops.get(at)));
                }
                return;
            }
            holder.beforeApply();
            List<BatchResult> results;
            try {
                results = observations.applyBulk(observed, () -> single.applying().applyAll(ops));
            } catch (RuntimeException e) {   // before any write (the collection check): each message on its own
                log.warn("batch of {} not applied ({}); applying its messages one by one", ops.size(), e.toString());
                for (int i = 0; i < ops.size(); i++) {
                    int at = i;
                    in(observed.get(i), () -> holder.hold(decoded.get(at), ops.get(at)));
                }
                return;
            }
            List<Integer> failed = new ArrayList<>();
            for (int i = 0; i < results.size(); i++) {
                BatchResult result = results.get(i);
                Delivery message = decoded.get(i);
                if (result instanceof BatchResult.Done done) {
                    single.mongoAnswered();
                    in(observed.get(i), () -> single.settleOutcome(message, done.op(), done.outcome()));
                } else if (result instanceof BatchResult.Refused refused) {
                    in(observed.get(i), () -> single.refuse(message, refused.op(), refused.reason()));
                } else {
                    failed.add(i);
                }
            }
            for (int i : failed) {
                in(observed.get(i), () -> holder.hold(decoded.get(i), ops.get(i)));
            }
        } catch (IOException e) {
            // the connection is gone: the broker redelivers whatever is not settled
            log.warn("batch of {} on a closed connection ({}): the broker redelivers what was not settled", ops.size(),
                    e.toString());
        } finally {
            observed.forEach(Observation::stop);   // each ends with its batch, the time its consumer thread spent
        }
    }

    private interface Settle {
        void run() throws IOException;
    }

    /** Settles one message of the batch with its own observation in scope. */
    private static void in(Observation observation, Settle settle) throws IOException {
        try (Observation.Scope scope = observation.openScope()) {
            settle.run();
        } catch (IOException | RuntimeException e) {
            observation.error(e);
            throw e;
        }
    }
}
