package dev.orderless.testing.chaos;

import dev.orderless.OrderlessException;
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
            try {
                ops.add(envelope.decode(line.getBytes(StandardCharsets.UTF_8)));
            } catch (RuntimeException e) {
                throw new OrderlessException(file + " line " + (i + 1) + " is not an orderless envelope: "
                        + e.getMessage(), e);
            }
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
