package dev.orderless.boot;

import dev.orderless.backends.rabbit.RabbitBackend;
import java.util.function.Supplier;
import org.springframework.test.context.DynamicPropertyRegistry;

/** Boot's {@code spring.rabbitmq.*} properties for the broker a test runs against, in one place. */
public final class BootRabbit {
    private BootRabbit() {
    }

    /** Host, port, user, password and virtual host of {@code rabbit} (read when Boot asks, after the extension set it). */
    public static void properties(DynamicPropertyRegistry registry, Supplier<RabbitBackend> rabbit) {
        registry.add("spring.rabbitmq.host", () -> rabbit.get().uri().getHost());
        registry.add("spring.rabbitmq.port", () -> rabbit.get().uri().getPort());
        registry.add("spring.rabbitmq.username", () -> rabbit.get().uri().getUserInfo().split(":", 2)[0]);
        registry.add("spring.rabbitmq.password", () -> rabbit.get().uri().getUserInfo().split(":", 2)[1]);
        registry.add("spring.rabbitmq.virtual-host", () -> {
            String path = rabbit.get().uri().getPath();
            return path == null || path.length() <= 1 ? "/" : path.substring(1);
        });
    }
}
