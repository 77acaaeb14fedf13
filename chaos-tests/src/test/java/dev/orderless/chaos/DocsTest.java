package dev.orderless.chaos;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * The documentation stays true: every Java block in README.md, CONTRIBUTING.md and docs/ is quoted from a
 * tagged region ({@code // tag::name[]} ... {@code // end::name[]}) of a source file the build compiles,
 * every properties block is a properties file of the build, and every relative link and anchor resolves.
 */
class DocsTest {
    private static final Path ROOT = Path.of("..").toAbsolutePath().normalize();
    private static final Pattern REGION = Pattern.compile("// tag::([a-z-]+)\\[]\\n(.*?)\\n\\s*// end::\\1\\[]",
            Pattern.DOTALL);
    private static final Pattern FENCE = Pattern.compile("(?m)^```(\\w*)\\n(.*?)\\n```$", Pattern.DOTALL);
    private static final Pattern LINK = Pattern.compile("\\[([^\\]]*)]\\(([^)\\s]+)\\)");
    private static final Pattern HEADING = Pattern.compile("(?m)^#{1,6} (.+)$");

    @Test
    void every_java_block_in_the_docs_is_a_region_of_a_compiled_source_file() {
        Set<String> regions = new HashSet<>();
        files(".java").forEach(source -> {
            Matcher region = REGION.matcher(read(source));
            while (region.find()) {
                regions.add(region.group(2).stripIndent().strip());
            }
        });
        List<String> unquoted = new ArrayList<>();
        for (Path doc : docs()) {
            Matcher block = FENCE.matcher(read(doc));
            while (block.find()) {
                if (block.group(1).equals("java") && !regions.contains(block.group(2).strip())) {
                    unquoted.add(ROOT.relativize(doc) + ": " + block.group(2).lines().findFirst().orElse(""));
                }
            }
        }
        assertThat(unquoted).as("Java blocks that no tagged region of a compiled source holds (copy the region"
                + " again after changing the source)").isEmpty();
    }

    @Test
    void every_properties_block_in_the_docs_is_a_properties_file_of_the_build() {
        Set<String> files = new HashSet<>();
        files(".properties").forEach(file -> files.add(read(file).strip()));
        List<String> unquoted = new ArrayList<>();
        for (Path doc : docs()) {
            Matcher block = FENCE.matcher(read(doc));
            while (block.find()) {
                if (block.group(1).equals("properties") && !files.contains(block.group(2).strip())) {
                    unquoted.add(ROOT.relativize(doc) + ": " + block.group(2).lines().findFirst().orElse(""));
                }
            }
        }
        assertThat(unquoted).isEmpty();
    }

    @Test
    void every_relative_link_and_anchor_in_the_docs_resolves() {
        List<String> broken = new ArrayList<>();
        for (Path doc : docs()) {
            Matcher link = LINK.matcher(withoutCode(read(doc)));
            while (link.find()) {
                String target = link.group(2);
                if (target.matches("^[a-z]+:.*")) {
                    continue;   // a web address: not checked here
                }
                String path = target.contains("#") ? target.substring(0, target.indexOf('#')) : target;
                String anchor = target.contains("#") ? target.substring(target.indexOf('#') + 1) : "";
                Path file = path.isEmpty() ? doc : doc.getParent().resolve(path).normalize();
                if (!Files.exists(file)) {
                    broken.add(ROOT.relativize(doc) + ": " + target + " (no such file)");
                } else if (!anchor.isEmpty() && (!file.toString().endsWith(".md") || !anchors(file).contains(anchor))) {
                    broken.add(ROOT.relativize(doc) + ": " + target + " (no such heading)");
                }
            }
        }
        assertThat(broken).isEmpty();
    }

    @Test
    void the_readme_is_short_and_the_rest_is_in_docs() {
        assertThat(read(ROOT.resolve("README.md")).lines().count()).as("README.md lines").isLessThanOrEqualTo(200);
    }

    private static List<Path> docs() {
        List<Path> docs = new ArrayList<>(List.of(ROOT.resolve("README.md"), ROOT.resolve("CONTRIBUTING.md")));
        try (Stream<Path> walk = Files.walk(ROOT.resolve("docs"))) {
            walk.filter(p -> p.toString().endsWith(".md")).sorted().forEach(docs::add);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return docs;
    }

    private static List<Path> files(String ending) {
        try (Stream<Path> walk = Files.walk(ROOT)) {
            return walk.filter(p -> p.toString().endsWith(ending))
                    .filter(p -> !p.toString().contains("/target/") && !p.toString().contains("/.git/"))
                    .toList();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** The anchors GitHub makes of a file's headings. */
    private static Set<String> anchors(Path markdown) {
        Set<String> anchors = new HashSet<>();
        Matcher heading = HEADING.matcher(withoutCode(read(markdown)));
        while (heading.find()) {
            anchors.add(heading.group(1).strip().toLowerCase(Locale.ROOT).replace("`", "")
                    .replaceAll("[^\\w\\- ]", "").replace(' ', '-'));
        }
        return anchors;
    }

    private static String withoutCode(String markdown) {
        return FENCE.matcher(markdown).replaceAll("");
    }

    private static String read(Path file) {
        try {
            return Files.readString(file, StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
