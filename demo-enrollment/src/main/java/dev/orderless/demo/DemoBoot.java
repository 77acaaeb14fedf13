package dev.orderless.demo;

import dev.orderless.OrderlessException;
import dev.orderless.apply.CollectionSchema;
import dev.orderless.boot.OrderlessConsumer;
import dev.orderless.boot.OrderlessFeeders;
import dev.orderless.boot.OrderlessView;
import dev.orderless.view.ViewFeeder;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.LinkedHashMap;
import java.util.Map;
import org.springframework.amqp.rabbit.connection.ConnectionFactory;
import org.springframework.boot.Banner;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.core.env.MapPropertySource;

/**
 * {@code consume} and {@code view} as the Spring Boot application a team would write: a schema bean, a
 * view bean and properties; orderless's auto-configuration builds the consumer (on Boot's container
 * factory) and the feeder, and starts and stops them with the context. The command's flags become the
 * properties below; the clients are the command's own (made by {@link Wiring}, checked to answer, closed
 * by it), so a failure to connect is still one line naming the URI.
 *
 * <pre>
 * orderless.database=&lt;--database&gt;
 * orderless.collection=students
 * orderless.leases=leases
 * orderless.consumer.queue=&lt;--queue&gt;                (consume only)
 * orderless.consumer.dead-letter-queue=&lt;queue&gt;.dlq
 * orderless.consumer.concurrency=&lt;--consumers&gt;
 * orderless.history.enabled=true                     (consume --history only: students_history; the
 *                                                     baseline takes the students already there into it)
 * orderless.consumer.protocol=amqp-1.0               (consume --protocol amqp-1.0 only, with
 * spring.rabbitmq.host, port, username, password,   the AMQP URI's parts, decoded, for the AMQP 1.0
 * virtual-host                                       connection)
 * </pre>
 */
final class DemoBoot {
    /** What the application declares itself: the entities' schema, and (for {@code view}) the rosters view. */
    @SpringBootConfiguration
    @EnableAutoConfiguration
    static class App {
        @Bean
        CollectionSchema studentSchema() {
            return Enrollment.STUDENT_SCHEMA;
        }
    }

    /** The rosters view, in the {@code view} application only. */
    @SpringBootConfiguration
    static class Rosters {
        @Bean
        OrderlessView classRosters() {
            return new OrderlessView(Enrollment.ROSTERS, Enrollment.STUDENTS, Enrollment.ROSTERS,
                    Enrollment.ROSTER_SCHEMA, new ClassRosterProjection());
        }
    }

    /**
     * Tomcat logs through java.util.logging, which the demo's logback does not take: only its warnings reach standard
     * error (held here: java.util.logging keeps its loggers weakly, and a collected one forgets its level).
     */
    private static final java.util.logging.Logger TOMCAT = java.util.logging.Logger.getLogger("org.apache");

    private DemoBoot() {
    }

    /**
     * Spring Boot's RabbitMQ properties for an AMQP URI, decoded as the URI scheme says (the virtual host is the
     * path without its slash, percent-decoded: {@code /%2F} is "/"). Not {@code spring.rabbitmq.addresses}:
     * Boot takes an address's virtual host as written.
     */
    static Map<String, Object> connectionDetails(java.net.URI uri) {
        Map<String, Object> properties = new java.util.LinkedHashMap<>();
        properties.put("spring.rabbitmq.host", uri.getHost());
        properties.put("spring.rabbitmq.port", uri.getPort() < 0 ? ("amqps".equals(uri.getScheme()) ? 5671 : 5672)
                : uri.getPort());
        if (uri.getUserInfo() != null) {
            String[] user = uri.getUserInfo().split(":", 2);
            properties.put("spring.rabbitmq.username", user[0]);
            if (user.length > 1) {
                properties.put("spring.rabbitmq.password", user[1]);
            }
        }
        String path = uri.getPath() == null ? "" : uri.getPath();
        properties.put("spring.rabbitmq.virtual-host", path.length() <= 1 ? "/" : path.substring(1));
        return properties;
    }

    /** The consumers of {@code consume}, started; closing the context stops them gracefully. */
    static ConfigurableApplicationContext consume(Wiring w, MeterRegistry meters) {
        Map<String, Object> properties = common(w);
        properties.put("orderless.consumer.queue", w.options.queue());
        properties.put("orderless.consumer.dead-letter-queue", w.options.deadLetterQueue());
        properties.put("orderless.consumer.concurrency", w.options.consumers());
        if (w.options.history()) {
            properties.put("orderless.history.enabled", "true");   // the consumer records before it applies
        }
        if (w.options.protocol() == Protocol.AMQP_1_0) {
            properties.put("orderless.consumer.protocol", "amqp-1.0");
            // where the AMQP 1.0 connection goes: Boot's connection details, from the same URI
            properties.putAll(connectionDetails(java.net.URI.create(w.rabbitUri())));
        }
        return run(new SpringApplicationBuilder(App.class), properties, w, meters, true, WebApplicationType.NONE);
    }

    /** The roster feeder of {@code view}, started; closing the context commits and releases its lease. */
    static ConfigurableApplicationContext view(Wiring w, MeterRegistry meters, int segments) {
        Map<String, Object> properties = common(w);
        properties.put("orderless.view." + Enrollment.ROSTERS + ".segments", segments);
        // view needs only MongoDB: no AMQP connection factory of Boot's
        properties.put("spring.autoconfigure.exclude", "org.springframework.boot.amqp.autoconfigure.RabbitAutoConfiguration");
        return run(new SpringApplicationBuilder(App.class, Rosters.class), properties, w, meters, false,
                WebApplicationType.NONE);
    }

    /**
     * {@code serve --console}: the consumers, the rosters feeder and the students' history as one Spring Boot web
     * application on {@code 127.0.0.1:port} (0: any free port), serving the console under the login of
     * {@code users}. Publish to it with {@code publish}; it runs until the context is closed.
     */
    static ConfigurableApplicationContext console(Wiring w, MeterRegistry meters, int port, ConsoleUsers users) {
        Map<String, Object> properties = consoleProperties(w, port);
        properties.put("orderless.consumer.queue", w.options.queue());
        properties.put("orderless.consumer.dead-letter-queue", w.options.deadLetterQueue());
        properties.put("orderless.consumer.concurrency", w.options.consumers());
        properties.put("orderless.history.enabled", "true");   // an entity's versions, on its page
        return run(new SpringApplicationBuilder(App.class, Rosters.class, ConsoleSecurity.class)
                .initializers(context -> context.getBeanFactory().registerSingleton("consoleUsers", users.manager())),
                properties, w, meters, true, WebApplicationType.SERVLET);
    }

    /**
     * {@code run --console}: the console alone, over what {@code sources} holds (the run's own consumers, feeder and
     * history), on {@code 127.0.0.1:port} under the login of {@code users}.
     */
    static ConfigurableApplicationContext console(Wiring w, dev.orderless.console.ConsoleSources sources, int port,
                                                  ConsoleUsers users) {
        Map<String, Object> properties = consoleProperties(w, port);
        // the run's consumers are its own: no AMQP connection factory of Boot's
        properties.put("spring.autoconfigure.exclude", "org.springframework.boot.amqp.autoconfigure.RabbitAutoConfiguration");
        return run(new SpringApplicationBuilder(App.class, ConsoleSecurity.class).initializers(context -> {
            context.getBeanFactory().registerSingleton("consoleUsers", users.manager());
            context.getBeanFactory().registerSingleton("consoleSources", sources);
        }), properties, w, meters(), false, WebApplicationType.SERVLET);
    }

    /** The demo's properties with the console on, on {@code 127.0.0.1:port}: the demo's console is for this machine only. */
    private static Map<String, Object> consoleProperties(Wiring w, int port) {
        Map<String, Object> properties = common(w);
        properties.put("orderless.console.enabled", "true");
        properties.put("server.port", port);
        properties.put("server.address", "127.0.0.1");
        return properties;
    }

    /** Where a console application's page is. */
    static String consoleUrl(ConfigurableApplicationContext app) {
        return "http://127.0.0.1:" + ((org.springframework.boot.web.server.context.WebServerApplicationContext) app)
                .getWebServer().getPort() + "/orderless/console/";
    }

    private static MeterRegistry meters() {
        return new io.micrometer.core.instrument.simple.SimpleMeterRegistry();
    }

    /** The console's logins: an operator who may replay, park and purge, and a viewer who may only look. */
    record ConsoleUsers(String operatorPassword, String viewerPassword) {
        static ConsoleUsers random() {
            java.security.SecureRandom random = new java.security.SecureRandom();
            return new ConsoleUsers(password(random), password(random));
        }

        private static String password(java.security.SecureRandom random) {
            byte[] bytes = new byte[9];
            random.nextBytes(bytes);
            return java.util.Base64.getUrlEncoder().withoutPadding().encodeToString(bytes);
        }

        org.springframework.security.provisioning.InMemoryUserDetailsManager manager() {
            return new org.springframework.security.provisioning.InMemoryUserDetailsManager(
                    org.springframework.security.core.userdetails.User.withUsername("operator")
                            .password("{noop}" + operatorPassword).roles("ORDERLESS_OPERATOR").build(),
                    org.springframework.security.core.userdetails.User.withUsername("viewer")
                            .password("{noop}" + viewerPassword).roles("VIEWER").build());
        }
    }

    /** Every page needs a login (a form for the browser, basic for curl); CSRF protection stays on. */
    @org.springframework.context.annotation.Configuration(proxyBeanMethods = false)
    static class ConsoleSecurity {
        @Bean
        org.springframework.security.web.SecurityFilterChain consoleSecurity(
                org.springframework.security.config.annotation.web.builders.HttpSecurity http) throws Exception {
            return http.authorizeHttpRequests(requests -> requests
                            // a refusal's error page must not ask for a login: a refused POST answers 403
                            .dispatcherTypeMatchers(jakarta.servlet.DispatcherType.ERROR).permitAll()
                            .anyRequest().authenticated())
                    .formLogin(org.springframework.security.config.Customizer.withDefaults())
                    .httpBasic(org.springframework.security.config.Customizer.withDefaults()).build();
        }
    }

    static OrderlessConsumer consumer(ConfigurableApplicationContext context) {
        return context.getBean(OrderlessConsumer.class);
    }

    static ViewFeeder rosterFeeder(ConfigurableApplicationContext context) {
        return context.getBean(OrderlessFeeders.class).feeders().get(Enrollment.ROSTERS);
    }

    private static Map<String, Object> common(Wiring w) {
        Map<String, Object> properties = new LinkedHashMap<>();
        properties.put("orderless.database", w.options.database());
        properties.put("orderless.collection", Enrollment.STUDENTS);
        properties.put("orderless.leases", "leases");
        properties.put("orderless.publisher.enabled", "false");   // publish is another command
        return properties;
    }

    private static ConfigurableApplicationContext run(SpringApplicationBuilder builder, Map<String, Object> properties,
                                                      Wiring w, MeterRegistry meters, boolean amqp,
                                                      WebApplicationType web) {
        // the demo's logback.xml stays in charge of its output; Boot does not reconfigure logging
        System.setProperty("org.springframework.boot.logging.LoggingSystem", "none");
        // spring.main.* is read before any initializer runs: these two are set on the builder itself
        if (web == WebApplicationType.SERVLET) {
            TOMCAT.setLevel(java.util.logging.Level.WARNING);
        }
        builder.web(web).registerShutdownHook(false).bannerMode(Banner.Mode.OFF).logStartupInfo(false)
                .initializers(context -> {
                    // first: the command's flags win over environment variables and any properties file
                    context.getEnvironment().getPropertySources().addFirst(new MapPropertySource("orderless-demo",
                            properties));
                    context.getBeanFactory().registerSingleton("mongoClient", w.client);
                    context.getBeanFactory().registerSingleton("meterRegistry", meters);
                    if (amqp) {
                        context.getBeanFactory().registerSingleton("rabbitConnectionFactory", (ConnectionFactory) w.rabbit());
                        // the AMQP 1.0 consumer's client counts what it holds into the same tally as AMQP 0-9-1's
                        context.getBeanFactory().registerSingleton("amqp10MetricsCollector", w.held.amqp10());
                    }
                });
        try {
            return builder.run();
        } catch (RuntimeException e) {   // Boot wraps a bean's failure: the one line is the orderless reason inside
            for (Throwable cause = e; cause != null; cause = cause.getCause()) {
                if (cause instanceof OrderlessException orderless) {
                    throw orderless;
                }
            }
            throw e;
        }
    }
}
