package dev.orderless.testing.chaos;

import dev.orderless.InvalidConfigurationException;
import dev.orderless.apply.CollectionSchema;
import dev.orderless.view.ViewProjection;

/**
 * A view a chaos run keeps beside the collection, with a {@link dev.orderless.view.ViewFeeder} of the run's own,
 * and checks at the end: every view document must hold what the projection of the final documents gives (its live
 * elements with their attributes, its registers' values; not the seqs or tombstones, which record how the view got
 * there). It proves the view converges under the run, whatever versions the feeder saw; a projection that is wrong
 * for every version (it drops a field, say) is wrong on both sides, and is for the projection's own tests.
 *
 * @param collection the view collection (in the run's database)
 * @param schema     the view's schema
 * @param projection the team's projection, source document to view operations
 */
public record ChaosView(String collection, CollectionSchema schema, ViewProjection projection) {
    public ChaosView {
        if (collection == null || collection.isBlank() || schema == null || projection == null) {
            throw new InvalidConfigurationException("chaos view: a collection, a schema and a projection");
        }
    }
}
