package dev.orderless.boot;

import dev.orderless.InvalidConfigurationException;
import dev.orderless.apply.CollectionSchema;
import dev.orderless.view.ViewProjection;

/**
 * A view for the auto-configuration to feed: declare one bean per view. Its feeder runs under the lease
 * {@code view:<name>} (one active feeder across every instance of the application), with options from
 * {@code orderless.view.<name>.*}.
 *
 * <pre>
 * &#64;Bean
 * OrderlessView rosters() {
 *     return new OrderlessView("rosters", "students", "class_rosters", ROSTER_SCHEMA, new ClassRosterProjection());
 * }
 * </pre>
 *
 * @param name       names the view in properties, the lease and health
 * @param source     the source collection, written by orderless, in {@code orderless.database}
 * @param collection the view collection, in the same database
 * @param schema     the view's schema
 * @param projection a source document to its view operations
 */
public record OrderlessView(String name, String source, String collection, CollectionSchema schema,
                            ViewProjection projection) {
    public OrderlessView {
        for (String[] part : new String[][] {{"name", name}, {"source", source}, {"collection", collection}}) {
            if (part[1] == null || part[1].isBlank()) {
                throw new InvalidConfigurationException("orderless view: " + part[0] + " must not be empty");
            }
        }
        if (schema == null || projection == null) {
            throw new InvalidConfigurationException("orderless view '" + name + "': schema and projection are required");
        }
        if (source.equals(collection)) {
            throw new InvalidConfigurationException("orderless view '" + name + "': the view collection must differ"
                    + " from its source '" + source + "'");
        }
    }
}
