package dev.orderless.backends.rabbit;

import java.net.URI;
import java.net.URISyntaxException;

/** A RabbitMQ named by a URI, e.g. {@code amqp://guest:guest@localhost:5672/%2F}. */
final class ExternalRabbit implements RabbitBackend {
    private final URI uri;

    ExternalRabbit(String uri) {
        try {
            this.uri = new URI(uri);
        } catch (URISyntaxException e) {
            throw new IllegalArgumentException("RabbitMQ URI is not a valid URI (" + e.getMessage()
                    + "); expected e.g. amqp://guest:guest@localhost:5672/%2F");
        }
        if (!"amqp".equals(this.uri.getScheme()) && !"amqps".equals(this.uri.getScheme())) {
            throw new IllegalArgumentException("RabbitMQ URI must start with amqp:// or amqps://, was '" + uri + "'");
        }
    }

    @Override
    public Kind kind() {
        return Kind.EXTERNAL;
    }

    @Override
    public URI uri() {
        return uri;
    }

    @Override
    public boolean isRabbitMq() {
        return true;
    }

    @Override
    public String description() {
        return "AMQP broker at " + uri.getHost() + ":" + (uri.getPort() < 0 ? 5672 : uri.getPort());
    }

    @Override
    public void close() {
        // not ours to stop
    }
}
