package dev.orderless.demo.compare;

import java.time.Duration;

/**
 * One run of one contestant: everything that is held fixed while contestants are compared.
 *
 * @param contestant who applies the messages
 * @param batched    one ordered bulk write per batch (orderless: its batched guarded apply) instead of one
 *                   write per message
 * @param workload   the actions
 * @param fault      what goes wrong during the run
 * @param consumers  consumer processes (each with its own broker connection and MongoDB client)
 * @param latency    added to every MongoDB round trip (half each way)
 */
record Trial(Contestant contestant, boolean batched, CompareWorkload workload, Fault fault, int consumers,
             Duration latency) {
    /** Messages per batch, for every batched contestant (orderless's default). */
    static final int BATCH = 50;

    String label() {
        return contestant.label + (contestant == Contestant.ORDERLESS ? "" : batched ? ", batched" : ", per message");
    }
}
