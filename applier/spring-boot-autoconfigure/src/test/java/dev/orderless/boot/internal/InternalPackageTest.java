package dev.orderless.boot.internal;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * {@code dev.orderless.boot.internal} is what the auto-configuration needs and users must not touch: it depends on
 * the library's public packages, never on {@code dev.orderless.boot} itself, so that the two do not depend on each
 * other (a cycle: a change to either drags the other along).
 */
class InternalPackageTest {

    @Test
    void nothing_in_boot_internal_depends_on_the_boot_package() throws IOException {
        List<String> offending;
        try (Stream<Path> sources = Files.list(Path.of("src/main/java/dev/orderless/boot/internal"))) {
            offending = sources.filter(p -> p.toString().endsWith(".java")).flatMap(p -> {
                try {
                    return Files.readAllLines(p).stream()
                            .filter(line -> line.matches("import (static )?dev\\.orderless\\.boot\\.[A-Z].*"))
                            .map(line -> p.getFileName() + ": " + line);
                } catch (IOException e) {
                    throw new java.io.UncheckedIOException(e);
                }
            }).toList();
        }
        assertThat(offending).isEmpty();
    }
}
