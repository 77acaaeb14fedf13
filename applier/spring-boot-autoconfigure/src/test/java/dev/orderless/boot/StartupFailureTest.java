package dev.orderless.boot;

import static org.assertj.core.api.Assertions.assertThat;

import com.mongodb.client.MongoClient;
import dev.orderless.apply.CollectionSchema;
import dev.orderless.backends.MongoBackend;
import dev.orderless.backends.rabbit.RabbitBackend;
import dev.orderless.oracle.Histories;
import dev.orderless.testing.MongoExtension;
import dev.orderless.testing.rabbit.RabbitExtension;
import java.util.List;
import java.util.Objects;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.amqp.rabbit.connection.CachingConnectionFactory;
import org.springframework.amqp.rabbit.connection.ConnectionFactory;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.diagnostics.FailureAnalysis;
import org.springframework.boot.diagnostics.FailureAnalyzer;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.core.io.support.SpringFactoriesLoader;

/**
 * A start-up that orderless refuses is reported as orderless says it: its one-line reason is the failure
 * analysis Boot prints ("APPLICATION FAILED TO START"), with what to do, not the fourth {@code Caused by} of a
 * stack trace.
 */
@ExtendWith({MongoExtension.class, RabbitExtension.class})
class StartupFailureTest {

    @Test
    void an_orderless_refusal_is_the_failure_analysis_boot_prints(MongoBackend mongo, RabbitBackend rabbit) {
        new ApplicationContextRunner()
                .withConfiguration(AutoConfigurations.of(OrderlessAutoConfiguration.class))
                .withBean(MongoClient.class, mongo::newClient)
                .withBean(ConnectionFactory.class, () -> new CachingConnectionFactory(rabbit.uri()))
                .withBean(CollectionSchema.class, () -> Histories.SCHEMA)
                .withPropertyValues("orderless.collection=students")
                .run(context -> {
                    assertThat(context).hasFailed();

                    FailureAnalysis analysis = analysisOf(context.getStartupFailure());

                    assertThat(analysis.getDescription()).startsWith("orderless: orderless.database is not set")
                            .doesNotContain("\n");
                    assertThat(analysis.getAction()).startsWith("Change what the description names");
                });
    }

    /** What Boot's failure analyzers, as it finds them, make of {@code failure}: the first analysis. */
    private static FailureAnalysis analysisOf(Throwable failure) {
        // the analyzers Boot makes with no context (those that need one analyze other failures: missing beans and the like)
        List<FailureAnalyzer> analyzers = SpringFactoriesLoader.forDefaultResourceLocation().load(FailureAnalyzer.class,
                null, SpringFactoriesLoader.FailureHandler.logging(org.apache.commons.logging.LogFactory.getLog(
                        StartupFailureTest.class)));
        assertThat(analyzers).as("registered in META-INF/spring.factories").hasAtLeastOneElementOfType(OrderlessFailureAnalyzer.class);
        return analyzers.stream().map(analyzer -> analyzer.analyze(failure)).filter(Objects::nonNull).findFirst()
                .orElseThrow(() -> new AssertionError("no failure analyzer took " + failure));
    }
}
