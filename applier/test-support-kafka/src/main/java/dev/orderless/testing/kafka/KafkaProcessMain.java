package dev.orderless.testing.kafka;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Properties;
import kafka.server.KafkaConfig;
import kafka.server.KafkaRaftServer;
import org.apache.kafka.common.utils.Time;

/**
 * The child JVM of a {@link KafkaProcess}: formats the node's logs the first time, starts it, writes the ready file
 * its parent waits for, and runs until it is killed. Arguments: the server.properties and the ready file.
 */
final class KafkaProcessMain {
    private KafkaProcessMain() {
    }

    public static void main(String[] args) throws Exception {
        Properties properties = KafkaNode.readProperties(Path.of(args[0]));
        if (!KafkaNode.formatted(properties)) {
            KafkaNode.format(properties);
        }
        KafkaRaftServer server = new KafkaRaftServer(KafkaConfig.fromProps(properties), Time.SYSTEM);
        Runtime.getRuntime().addShutdownHook(new Thread(server::shutdown, "kafka-shutdown"));
        server.startup();
        Files.writeString(Path.of(args[1]), "ready");
        System.out.println("[orderless tests] Kafka process ready");
        server.awaitShutdown();
    }
}
