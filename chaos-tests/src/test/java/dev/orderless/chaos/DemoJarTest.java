package dev.orderless.chaos;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.zip.ZipEntry;
import java.util.zip.ZipFile;
import org.junit.jupiter.api.Test;

/** The demo jar a user runs (shaded at package time, after the demo's own tests), checked as built. */
class DemoJarTest {
    private static final Path JAR = Path.of("../demo-enrollment/target/demo-enrollment.jar");

    @Test
    void the_demo_jar_carries_a_logging_backend_so_its_warnings_and_errors_are_seen() throws Exception {
        try (ZipFile jar = new ZipFile(JAR.toFile())) {
            ZipEntry providers = jar.getEntry("META-INF/services/org.slf4j.spi.SLF4JServiceProvider");
            assertThat(providers).as("an SLF4J provider in " + JAR).isNotNull();
            assertThat(new String(jar.getInputStream(providers).readAllBytes(), StandardCharsets.UTF_8))
                    .contains("ch.qos.logback.classic");
            assertThat(jar.getEntry("logback.xml")).isNotNull();
        }
    }
}
