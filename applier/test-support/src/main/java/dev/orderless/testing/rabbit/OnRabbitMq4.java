package dev.orderless.testing.rabbit;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Inherited;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Runs a test class against the RabbitMQ 4 that {@code RABBITMQ4_URI} names (CI starts one beside RabbitMQ
 * 3.x), whatever {@code RABBITMQ_URI} says: {@link RabbitExtension} then gives it that broker, and
 * {@link LocalRabbitMq#ctl} that node's {@code rabbitmqctl} ({@code RABBITMQ4_CTL}). Without
 * {@code RABBITMQ4_URI} the class is skipped, and the run says so once. Such a class may run beside the classes
 * on the other broker ({@code @Execution(CONCURRENT)}): nothing it does reaches them.
 */
@Target(ElementType.TYPE)
@Retention(RetentionPolicy.RUNTIME)
@Inherited
@Documented
@ExtendWith(RabbitExtension.class)
public @interface OnRabbitMq4 {
}
