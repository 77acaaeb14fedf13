package dev.orderless.demo.compare;

/** A way to keep the students collection right with N consumers on Kafka. */
enum KafkaContestant {
    /**
     * A consumer group: one KafkaConsumer per partition (a member more stands idle), each partition's records in
     * order; per poll (up to 50 records) one ordered bulk write of plain upserts, then the offsets committed. What
     * a Kafka team runs today to keep per-key order.
     */
    CONSUMER_GROUP("consumer group, per-partition order, batched"),
    /** A share group (KIP-932): any member takes any record, no order at all; the guarded apply, batched per poll. */
    SHARE_GROUP("share group, orderless");

    final String label;

    KafkaContestant(String label) {
        this.label = label;
    }
}
