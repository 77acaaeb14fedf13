package dev.orderless.testing;

import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoDatabase;
import dev.orderless.backends.Backends;
import dev.orderless.backends.MongoBackend;
import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.ParameterContext;
import org.junit.jupiter.api.extension.ParameterResolver;

/**
 * Gives tests the MongoDB that {@link Backends} chooses: one backend and one client for the whole run
 * (kept in the root store and closed at its end), and a fresh database per test, dropped afterwards, so
 * no test sees another's data, on a shared server or not.
 *
 * <p>Parameters it resolves: {@link MongoDatabase} (fresh per test), {@link MongoBackend}, {@link MongoClient}.
 */
public final class MongoExtension implements ParameterResolver, AfterEachCallback {
    private static final ExtensionContext.Namespace NS = ExtensionContext.Namespace.create(MongoExtension.class);

    /** The run-wide backend and client; closed by JUnit when the root context closes. */
    record Shared(MongoBackend backend, MongoClient client) implements AutoCloseable {
        @Override
        public void close() {
            try {
                client.close();
            } finally {
                backend.close();
            }
        }
    }

    static Shared shared(ExtensionContext context) {
        return context.getRoot().getStore(NS).computeIfAbsent(Shared.class, k -> {
            MongoBackend backend = Backends.mongo();
            System.out.println("[orderless tests] MongoDB: " + backend.description());
            return new Shared(backend, backend.newClient());
        }, Shared.class);
    }

    @Override
    public boolean supportsParameter(ParameterContext parameter, ExtensionContext context) {
        Class<?> type = parameter.getParameter().getType();
        return type == MongoDatabase.class || type == MongoBackend.class || type == MongoClient.class;
    }

    @Override
    public Object resolveParameter(ParameterContext parameter, ExtensionContext context) {
        Shared shared = shared(context);
        Class<?> type = parameter.getParameter().getType();
        if (type == MongoBackend.class) {
            return shared.backend();
        }
        if (type == MongoClient.class) {
            return shared.client();
        }
        String name = MongoBackend.freshDatabaseName(context.getRequiredTestClass().getSimpleName());
        context.getStore(NS).put("database", name);
        return shared.client().getDatabase(name);
    }

    @Override
    public void afterEach(ExtensionContext context) {
        String name = context.getStore(NS).get("database", String.class);
        if (name != null) {
            shared(context).client().getDatabase(name).drop();
        }
    }
}
