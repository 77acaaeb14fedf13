package dev.orderless.demo.compare;

/** A way to keep the students collection right with N consumers on RabbitMQ. */
enum Contestant {
    /** N competing consumers on one quorum queue, the guarded apply (batched by default). */
    ORDERLESS("orderless"),
    /** One quorum queue with x-single-active-consumer, N consumers registered, plain upserts in arrival order. */
    SINGLE_ACTIVE("single active consumer"),
    /**
     * K = N quorum queues, each with a single active consumer (its owner, and one standby in another
     * process), routed by the producer: hash of the student modulo K, as Spring Cloud Stream's producer-side
     * partitioning does; plain upserts. Producer-side modulo rather than the consistent-hash exchange: it needs
     * no broker plugin, and it is what a Spring Cloud Stream user runs.
     */
    PARTITIONED("partitioned"),
    /** N competing consumers on one queue, plain upserts: what the guard buys. */
    UNGUARDED("unguarded competing");

    final String label;

    Contestant(String label) {
        this.label = label;
    }

    /** The lane a student's messages take: one queue for all but the partitioned contestant. */
    static int partition(String entity, int partitions) {
        return Math.floorMod(entity.hashCode(), partitions);
    }
}
