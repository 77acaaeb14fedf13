package dev.orderless.view;

import java.util.Optional;
import org.bson.BsonDocument;
import org.bson.BsonTimestamp;
import org.bson.BsonValue;

/**
 * What a feeder commits to its lease document: where to resume, which source collection that position
 * belongs to, and the cluster time of the last change it carried to the view.
 *
 * <pre>
 * { token: { _data: "8263..." },          // the change stream's resume token
 *   source: UUID("6f1c..."),              // the source collection's uuid, where the server reports one
 *   clusterTime: Timestamp(1700000000, 4) // of the last event processed, if any; OPLOG_START uses it
 * }
 * </pre>
 *
 * A bare resume token (what earlier versions committed) reads as a position with no uuid and no time.
 *
 * @param token       the resume token
 * @param source      the source collection's uuid, empty if unknown
 * @param clusterTime the cluster time of the last event processed, empty if unknown
 */
record Position(BsonDocument token, Optional<BsonValue> source, Optional<BsonTimestamp> clusterTime) {
    static final String TOKEN = "token";
    static final String SOURCE = "source";
    static final String CLUSTER_TIME = "clusterTime";

    static Position read(BsonDocument stored) {
        if (!stored.containsKey(TOKEN)) {
            return new Position(stored, Optional.empty(), Optional.empty());
        }
        BsonValue time = stored.get(CLUSTER_TIME);
        return new Position(stored.getDocument(TOKEN), Optional.ofNullable(stored.get(SOURCE)),
                time != null && time.isTimestamp() ? Optional.of(time.asTimestamp()) : Optional.empty());
    }

    BsonDocument toDocument() {
        BsonDocument doc = new BsonDocument(TOKEN, token);
        source.ifPresent(uuid -> doc.append(SOURCE, uuid));
        clusterTime.ifPresent(time -> doc.append(CLUSTER_TIME, time));
        return doc;
    }
}
