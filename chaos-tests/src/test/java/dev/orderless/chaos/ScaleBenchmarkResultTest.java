package dev.orderless.chaos;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.regex.Matcher;
import org.junit.jupiter.api.Test;

/** The benchmark reads the demo's RESULT line as README.md shows it (DocsTest keeps README.md true). */
class ScaleBenchmarkResultTest {

    @Test
    void the_benchmark_reads_the_result_line_the_readme_shows() throws Exception {
        String line = Files.readString(Path.of("..", "README.md")).lines()
                .filter(l -> l.startsWith("RESULT converged=")).findFirst().orElseThrow();

        Matcher result = ScaleBenchmark.RESULT.matcher(line);

        assertThat(result.find()).as(line).isTrue();
        assertThat(result.group(3)).as("lost").isEqualTo("0");
        assertThat(result.group(5)).as("rosters_consistent").isEqualTo("true");
    }
}
