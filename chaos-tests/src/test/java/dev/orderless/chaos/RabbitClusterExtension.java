package dev.orderless.chaos;

import java.util.Optional;
import org.junit.jupiter.api.extension.ConditionEvaluationResult;
import org.junit.jupiter.api.extension.ExecutionCondition;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.ParameterContext;
import org.junit.jupiter.api.extension.ParameterResolver;

/**
 * Gives a test the {@link RabbitCluster} its settings name. Without them the test is skipped (said once), except
 * with {@code CI=true}: there a missing cluster fails the test, as {@code .ci/run} starts one before it runs these,
 * so a cluster that did not come up is never a silent skip.
 */
final class RabbitClusterExtension implements ExecutionCondition, ParameterResolver {
    private static final ExtensionContext.Namespace NS = ExtensionContext.Namespace.create(RabbitClusterExtension.class);

    @Override
    public ConditionEvaluationResult evaluateExecutionCondition(ExtensionContext context) {
        if (RabbitCluster.fromSettings().isPresent()) {
            return ConditionEvaluationResult.enabled("");
        }
        if ("true".equals(System.getenv("CI"))) {
            return ConditionEvaluationResult.enabled("CI=true: a missing cluster fails the test");
        }
        context.getRoot().getStore(NS).getOrComputeIfAbsent("said", k -> {
            System.out.println("[orderless tests] the failover scenarios are skipped: " + RabbitCluster.MISSING);
            return Boolean.TRUE;
        });
        return ConditionEvaluationResult.disabled(RabbitCluster.MISSING);
    }

    @Override
    public boolean supportsParameter(ParameterContext parameter, ExtensionContext context) {
        return parameter.getParameter().getType() == RabbitCluster.class;
    }

    @Override
    public Object resolveParameter(ParameterContext parameter, ExtensionContext context) {
        Optional<RabbitCluster> cluster = RabbitCluster.fromSettings();
        return cluster.orElseThrow(() -> new IllegalStateException("CI=true and " + RabbitCluster.MISSING));
    }
}
