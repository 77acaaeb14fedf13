package dev.orderless.consume.internal;

/**
 * The apply logic a consumer drives and the meters it counts in, made once per consumer by
 * {@link dev.orderless.consume.ConsumerBuilder}: every broker's threads hand their deliveries to the same
 * {@link #single()} and {@link #batch()}.
 *
 * @param single  one delivery at a time
 * @param batch   the deliveries a consumer took together
 * @param metrics the {@code orderless.consume.*} meters, for {@code retrying()}
 */
public record Handling(ApplyingHandler single, BatchApplyingHandler batch, ConsumerMetrics metrics) {
}
