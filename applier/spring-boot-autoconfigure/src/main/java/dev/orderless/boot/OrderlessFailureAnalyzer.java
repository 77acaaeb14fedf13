package dev.orderless.boot;

import dev.orderless.InvalidConfigurationException;
import dev.orderless.OrderlessException;
import dev.orderless.TransientException;
import org.springframework.boot.diagnostics.AbstractFailureAnalyzer;
import org.springframework.boot.diagnostics.FailureAnalysis;
import org.springframework.core.Ordered;
import org.springframework.core.annotation.Order;

/**
 * Makes a start-up that orderless refused read as orderless says it: Boot prints its one-line reason as the
 * failure's description ("APPLICATION FAILED TO START"), with what to do, instead of a stack trace in which it is
 * the fourth {@code Caused by}. Every refusal orderless raises at start-up is an {@link OrderlessException} that
 * names the property, the server or the queue concerned; the outermost one in the failure's causes is reported.
 */
@Order(Ordered.HIGHEST_PRECEDENCE)   // before Boot's own (a bind failure around it): orderless's line names what to change
final class OrderlessFailureAnalyzer extends AbstractFailureAnalyzer<OrderlessException> {

    @Override
    protected FailureAnalysis analyze(Throwable rootFailure, OrderlessException cause) {
        return new FailureAnalysis("orderless: " + cause.getMessage(), action(cause), cause);
    }

    private static String action(OrderlessException cause) {
        if (cause instanceof InvalidConfigurationException) {
            return "Change what the description names (an orderless.* property, the broker's or MongoDB's set-up, a"
                    + " queue) and start again.";
        }
        if (cause instanceof TransientException) {
            return "Check that the server the description names is running and reachable from here, then start again.";
        }
        return "Correct what the description names and start again.";
    }
}
