package dev.orderless.testing.chaos;

import dev.orderless.apply.Operation;
import dev.orderless.message.Envelope;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/** A recorded history as a file of envelopes, one per line (blank lines and lines starting with '#' skipped). */
public final class Envelopes {
    private Envelopes() {
    }

    /**
     * The operations of {@code file}, in its order; a line that is not an envelope is an error naming its line.
     *
     * @throws UncheckedIOException if the file cannot be read
     */
    public static List<Operation> read(Path file) {
        return read(file, java.util.Optional.empty());
    }

    /**
     * As {@link #read(Path)}, each operation checked against {@code schema}: one it does not declare is an
     * {@link dev.orderless.InvalidInputException} naming the file and the line.
     */
    public static List<Operation> read(Path file, dev.orderless.apply.CollectionSchema schema) {
        return read(file, java.util.Optional.of(schema));
    }

    private static List<Operation> read(Path file, java.util.Optional<dev.orderless.apply.CollectionSchema> schema) {
        Envelope envelope = Envelope.ofDefaults();
        List<Operation> ops = new ArrayList<>();
        List<String> lines;
        try {
            lines = Files.readAllLines(file, StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read the history " + file + ": " + e.getMessage(), e);
        }
        for (int i = 0; i < lines.size(); i++) {
            String line = lines.get(i).strip();
            if (line.isEmpty() || line.startsWith("#")) {
                continue;
            }
            Operation op;
            try {
                op = envelope.decode(line.getBytes(StandardCharsets.UTF_8));
            } catch (RuntimeException e) {
                throw new dev.orderless.InvalidInputException(file + " line " + (i + 1) + " is not an orderless"
                        + " envelope: " + e.getMessage(), e);
            }
            try {
                schema.ifPresent(s -> s.validate(op));
            } catch (RuntimeException e) {
                throw new dev.orderless.InvalidInputException(file + " line " + (i + 1) + ": " + e.getMessage(), e);
            }
            ops.add(op);
        }
        return ops;
    }

    /** Writes {@code ops} to {@code file}, one envelope per line. */
    public static void write(Path file, List<Operation> ops) {
        Envelope envelope = Envelope.ofDefaults();
        List<String> lines = new ArrayList<>(ops.size());
        ops.forEach(op -> lines.add(new String(envelope.encode(op), StandardCharsets.UTF_8)));
        try {
            Files.write(file, lines, StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot write the history " + file + ": " + e.getMessage(), e);
        }
    }
}
