package dev.orderless.view;

import dev.orderless.InvalidConfigurationException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import org.bson.BsonBinaryWriter;
import org.bson.BsonDocument;
import org.bson.BsonValue;
import org.bson.codecs.BsonDocumentCodec;
import org.bson.codecs.EncoderContext;
import org.bson.io.BasicOutputBuffer;

/**
 * One of the {@code count} parts a view's source is split into: segment {@code index} owns the source
 * documents whose {@code _id} hashes to it. Each segment has its own lease and its own position, so the
 * segments of one view are fed by different workers, in one process or several.
 *
 * <p>The hash is stable across processes, restarts and versions of this library: the first 8 bytes
 * (little-endian) of the MD5 of the {@code _id}'s BSON encoding as the only field of a document, modulo
 * {@code count}. Changing it would move documents between segments of a running view; the tests pin it.
 * It is computed here, on the client, for the change stream's events and for a rebuild's scan alike: no
 * server expression gives the same hash on every backend (MongoDB's {@code $toHashedIndexKey} is 7.0+ and
 * absent from the embedded server), so each segment reads the whole stream and skips what is not its own.
 * What a segment saves is the expensive part, the projection and the view writes.
 *
 * @param index 0 to {@code count - 1}
 * @param count how many segments the view has (1: the whole source)
 */
public record Segment(int index, int count) {
    /** The most segments a view may have. */
    public static final int MAX = 256;

    /**
     * Checks the values.
     *
     * @param index 0 to {@code count - 1}
     * @param count how many segments the view has, 1 to {@link #MAX}
     * @throws InvalidConfigurationException if either is out of range
     */
    public Segment {
        if (count < 1 || count > MAX) {
            throw new InvalidConfigurationException("segments must be between 1 and " + MAX + ", was " + count);
        }
        if (index < 0 || index >= count) {
            throw new InvalidConfigurationException("segment index must be between 0 and " + (count - 1) + ", was "
                    + index);
        }
    }

    /**
     * The whole source, as an unsegmented view.
     *
     * @return segment 0 of 1, which owns every document
     */
    public static Segment whole() {
        return new Segment(0, 1);
    }

    /**
     * The lease of this segment of the view whose lease is {@code resource}: {@code resource} itself when the
     * view is not segmented (so a view keeps its position when it is not split), else
     * {@code resource#index/count}.
     *
     * @param resource the view's lease name, {@link FeederOptions#resource()}
     * @return this segment's lease name
     */
    public String resource(String resource) {
        return count == 1 ? resource : resource + "#" + index + "/" + count;
    }

    /**
     * True if the source document with this {@code _id} belongs to this segment. Exactly one segment of a
     * {@code count} owns each {@code _id}, the same in every process.
     *
     * @param id the source document's {@code _id}, of any BSON type
     * @return true if it hashes to {@link #index()}; always true when {@code count} is 1
     */
    public boolean owns(BsonValue id) {
        return count == 1 || of(id, count) == index;
    }

    /** The segment, of {@code count}, that the document with this {@code _id} belongs to. */
    static int of(BsonValue id, int count) {
        BasicOutputBuffer buffer = new BasicOutputBuffer(64);
        try (BsonBinaryWriter writer = new BsonBinaryWriter(buffer)) {
            new BsonDocumentCodec().encode(writer, new BsonDocument("_id", id), EncoderContext.builder().build());
        }
        byte[] digest = md5().digest(buffer.toByteArray());
        long hash = ByteBuffer.wrap(digest, 0, 8).order(ByteOrder.LITTLE_ENDIAN).getLong();
        return (int) Math.floorMod(hash, (long) count);
    }

    private static MessageDigest md5() {
        try {
            return MessageDigest.getInstance("MD5");   // every Java platform has it
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("MD5 is missing from this Java runtime", e);
        }
    }

    @Override
    public String toString() {
        return index + "/" + count;
    }
}
