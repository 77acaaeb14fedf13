package dev.orderless.broker.internal;

import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.Address;
import com.rabbitmq.client.AuthenticationFailureException;
import com.rabbitmq.client.PossibleAuthenticationFailureException;
import com.rabbitmq.client.ShutdownSignalException;
import dev.orderless.InvalidConfigurationException;
import dev.orderless.TransientException;
import java.lang.reflect.Field;
import java.util.List;
import java.util.Optional;
import java.util.stream.Collectors;
import org.springframework.amqp.AmqpAuthenticationException;
import org.springframework.amqp.AmqpConnectException;
import org.springframework.amqp.AmqpException;
import org.springframework.amqp.AmqpIOException;
import org.springframework.amqp.AmqpTimeoutException;
import org.springframework.amqp.rabbit.connection.AbstractConnectionFactory;
import org.springframework.amqp.rabbit.connection.ConnectionFactory;

/**
 * Tells a broker that refused this client (a login, a virtual host: the same answer on every retry, a
 * configuration to fix) from one that did not answer (worth waiting for), and says what to check.
 */
public final class BrokerRefusals {
    private BrokerRefusals() {
    }

    /** What to fix, if {@code failure} says the broker refused the connection for a reason of configuration. */
    public static Optional<String> configurationProblem(Throwable failure) {
        for (Throwable t = failure; t != null; t = t.getCause() == t ? null : t.getCause()) {
            if (t instanceof AmqpAuthenticationException || t instanceof AuthenticationFailureException
                    || t instanceof PossibleAuthenticationFailureException) {
                return Optional.of("the broker refused the login (" + message(t) + "): check the user name and password");
            }
            if (t instanceof ShutdownSignalException signal && signal.isHardError()
                    && signal.getReason() instanceof AMQP.Connection.Close close) {
                // RabbitMQ answers an unknown virtual host with 530; an embedded broker (serve's) with 404
                if (close.getReplyCode() == AMQP.NOT_ALLOWED || close.getReplyCode() == AMQP.NOT_FOUND) {
                    return Optional.of("the broker refused the virtual host (" + close.getReplyText() + "): check its"
                            + " name; in a URI RabbitMQ's default virtual host '/' is written %2F"
                            + " (amqp://user:password@host:5672/%2F), and a URI that ends in '/' names the empty one");
                }
                if (close.getReplyCode() == AMQP.ACCESS_REFUSED) {
                    return Optional.of("the broker refused access (" + close.getReplyText() + "): check the user's"
                            + " permissions on the virtual host");
                }
            }
        }
        return Optional.empty();
    }

    /** How failures name the broker {@code factory} connects to: "RabbitMQ at host:port (virtual host 'v')". */
    public static String where(ConnectionFactory factory) {
        return "RabbitMQ at " + address(factory) + " (virtual host '" + factory.getVirtualHost() + "')";
    }

    /**
     * A failure to reach or use the broker that {@code factory} names, as one line that says where (host, port,
     * virtual host), what failed ({@code doing}) and what to check: an {@link InvalidConfigurationException} when
     * the broker refused the connection (a login, a virtual host, permissions), else a {@link TransientException}
     * (it did not answer: refused, timed out, cut). Anything else is returned as it is, in neither.
     */
    public static RuntimeException named(ConnectionFactory factory, String doing, AmqpException failure) {
        String where = where(factory);
        Optional<String> refused = configurationProblem(failure);
        if (refused.isPresent()) {
            return new InvalidConfigurationException(where + ", " + doing + ": " + refused.get(), failure);
        }
        if (failure instanceof AmqpConnectException || failure instanceof AmqpIOException
                || failure instanceof AmqpTimeoutException) {
            return new TransientException(where + " cannot be reached (" + message(root(failure)) + "), " + doing
                    + ": check that it is running, and the connection factory's host, port and virtual host", failure);
        }
        return failure;
    }

    /**
     * Where {@code factory} connects: the addresses given to {@code setAddresses} (Spring Boot's and most
     * applications' way) where there are some, else its host and port. Spring AMQP keeps the addresses behind a
     * protected getter and its {@code getHost()} ignores them (it would name the machine's own host name and 5672),
     * so they are read from its field; a Spring AMQP without that field gets the host and port.
     */
    public static String address(ConnectionFactory factory) {
        if (factory instanceof AbstractConnectionFactory abstractFactory) {
            try {
                Field field = AbstractConnectionFactory.class.getDeclaredField("addresses");
                field.setAccessible(true);
                if (field.get(abstractFactory) instanceof List<?> addresses && !addresses.isEmpty()) {
                    return addresses.stream().map(BrokerRefusals::hostAndPort).collect(Collectors.joining(","));
                }
            } catch (ReflectiveOperationException | RuntimeException e) {
                // a Spring AMQP that keeps them otherwise: the host and port below
            }
        }
        return factory.getHost() + ":" + factory.getPort();
    }

    private static String hostAndPort(Object address) {
        if (address instanceof Address a) {
            return a.getHost() + ":" + (a.getPort() < 0 ? factoryDefaultPort() : a.getPort());
        }
        return String.valueOf(address);
    }

    private static int factoryDefaultPort() {
        return com.rabbitmq.client.ConnectionFactory.DEFAULT_AMQP_PORT;
    }

    private static Throwable root(Throwable failure) {
        Throwable root = failure;
        while (root.getCause() != null && root.getCause() != root) {
            root = root.getCause();
        }
        return root;
    }

    private static String message(Throwable t) {
        return t.getMessage() == null ? t.getClass().getSimpleName() : t.getMessage();
    }
}
