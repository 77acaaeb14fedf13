package dev.orderless.demo;

import com.rabbitmq.client.Channel;
import com.rabbitmq.client.Connection;
import java.util.Map;
import java.util.NavigableSet;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentSkipListSet;

/**
 * The deliveries this process holds: received from the broker and not settled yet (acked, rejected, or handed back).
 * {@code consume --exit-when-idle} exits only when it holds none and the queue is empty, so that nothing it was
 * given (prefetched, being applied, held for a MongoDB retry) is left behind as "lost".
 *
 * <p>Counted where each client sees the protocol, so deliveries prefetched and not yet handed to a listener count
 * too (a listener-side count would miss those):
 * <ul>
 *   <li>AMQP 0-9-1 ({@link #amqp091()}, the client's {@link com.rabbitmq.client.MetricsCollector}): per open channel,
 *       the delivery tags its manual-acknowledgement consumers received and that were not acked (one, or every
 *       tag up to it), nacked or rejected since. A channel that closes holds nothing: the broker takes its
 *       unsettled deliveries back. The client reports a nack without saying whether it was "multiple"; orderless
 *       nacks one delivery at a time, so a nack settles exactly its tag.
 *   <li>AMQP 1.0 ({@link #amqp10()}, the client's {@code metrics.MetricsCollector}): messages received minus
 *       messages settled while a consumer is open; once the last consumer closes, what it held went back to the
 *       queue.
 * </ul>
 */
final class HeldDeliveries {
    private final Map<Channel, Unsettled> channels = new ConcurrentHashMap<>();
    private long amqp10Received;
    private long amqp10Settled;
    private int amqp10Consumers;

    /** How many deliveries this process holds now, over both protocols. */
    long held() {
        long held = channels.values().stream().mapToLong(u -> u.tags.size()).sum();
        synchronized (this) {
            return held + Math.max(0, amqp10Received - amqp10Settled);
        }
    }

    /** The delivery tags one channel holds, and which of its consumers acknowledge by hand. */
    private static final class Unsettled {
        final Set<String> manual = ConcurrentHashMap.newKeySet();
        final NavigableSet<Long> tags = new ConcurrentSkipListSet<>();
    }

    private Unsettled on(Channel channel) {
        return channels.computeIfAbsent(channel, c -> new Unsettled());
    }

    /** For the AMQP 0-9-1 client's connection factory: {@code setMetricsCollector}. */
    com.rabbitmq.client.MetricsCollector amqp091() {
        return new com.rabbitmq.client.MetricsCollector() {
            @Override
            public void newConnection(Connection connection) {
            }

            @Override
            public void closeConnection(Connection connection) {
            }

            @Override
            public void newChannel(Channel channel) {
                // a channel that ends without close() (its connection lost) hands its deliveries back too
                channel.addShutdownListener(cause -> channels.remove(channel));
            }

            @Override
            public void closeChannel(Channel channel) {
                channels.remove(channel);
            }

            @Override
            public void basicPublish(Channel channel) {
            }

            @Override
            public void consumedMessage(Channel channel, long deliveryTag, boolean autoAck) {
                if (!autoAck) {   // basic.get
                    on(channel).tags.add(deliveryTag);
                }
            }

            @Override
            public void consumedMessage(Channel channel, long deliveryTag, String consumerTag) {
                Unsettled unsettled = on(channel);
                if (unsettled.manual.contains(consumerTag)) {
                    unsettled.tags.add(deliveryTag);
                }
            }

            @Override
            public void basicAck(Channel channel, long deliveryTag, boolean multiple) {
                Unsettled unsettled = channels.get(channel);
                if (unsettled != null) {
                    if (multiple) {
                        unsettled.tags.headSet(deliveryTag, true).clear();
                    } else {
                        unsettled.tags.remove(deliveryTag);
                    }
                }
            }

            @Override
            public void basicNack(Channel channel, long deliveryTag) {
                settled(channel, deliveryTag);
            }

            @Override
            public void basicNack(Channel channel, long deliveryTag, boolean requeue) {
                settled(channel, deliveryTag);
            }

            @Override
            public void basicReject(Channel channel, long deliveryTag) {
                settled(channel, deliveryTag);
            }

            @Override
            public void basicReject(Channel channel, long deliveryTag, boolean requeue) {
                settled(channel, deliveryTag);
            }

            private void settled(Channel channel, long deliveryTag) {
                Unsettled unsettled = channels.get(channel);
                if (unsettled != null) {
                    unsettled.tags.remove(deliveryTag);
                }
            }

            @Override
            public void basicConsume(Channel channel, String consumerTag, boolean autoAck) {
                if (!autoAck) {
                    on(channel).manual.add(consumerTag);
                }
            }

            @Override
            public void basicCancel(Channel channel, String consumerTag) {
                // what the cancelled consumer received stays unsettled on the channel until settled or closed
            }
        };
    }

    /** For the AMQP 1.0 client's environment: {@code AmqpEnvironmentBuilder.metricsCollector}. */
    com.rabbitmq.client.amqp.metrics.MetricsCollector amqp10() {
        return new com.rabbitmq.client.amqp.metrics.MetricsCollector() {
            @Override
            public void openConnection() {
            }

            @Override
            public void closeConnection() {
            }

            @Override
            public void openPublisher() {
            }

            @Override
            public void closePublisher() {
            }

            @Override
            public void openConsumer() {
                synchronized (HeldDeliveries.this) {
                    amqp10Consumers++;
                }
            }

            @Override
            public void closeConsumer() {
                synchronized (HeldDeliveries.this) {
                    amqp10Consumers = Math.max(0, amqp10Consumers - 1);
                    if (amqp10Consumers == 0) {
                        amqp10Settled = amqp10Received;   // the broker took back what they held
                    }
                }
            }

            @Override
            public void publish() {
            }

            @Override
            public void publishDisposition(PublishDisposition disposition) {
            }

            @Override
            public void consume() {
                synchronized (HeldDeliveries.this) {
                    amqp10Received++;
                }
            }

            @Override
            public void consumeDisposition(ConsumeDisposition disposition) {
                synchronized (HeldDeliveries.this) {
                    amqp10Settled++;
                }
            }

            @Override
            public void writtenBytes(int count) {
            }

            @Override
            public void readBytes(int count) {
            }
        };
    }
}
