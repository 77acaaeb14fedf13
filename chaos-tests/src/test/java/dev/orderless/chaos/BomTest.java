package dev.orderless.chaos;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * {@code orderless-bom} fixes the version of every library artifact: it lists each module that builds a jar, other
 * than the demo and the chaos tests, at the project's version, and pins the third-party families orderless's
 * artifacts would otherwise bring at two versions at the build's own. (ExampleApplicationTest builds the examples on
 * it, under the Maven Enforcer's dependency convergence.)
 */
class BomTest {
    private static final Path ROOT = Path.of("..");
    private static final Pattern ARTIFACT = Pattern.compile("<artifactId>(orderless-[a-z0-9-]+)</artifactId>");

    @Test
    void the_bom_lists_every_library_artifact_and_nothing_else() throws IOException {
        Set<String> libraries = new TreeSet<>();
        try (Stream<Path> poms = Files.walk(ROOT.resolve("applier"), 2)) {
            for (Path pom : poms.filter(p -> p.getFileName().toString().equals("pom.xml")).toList()) {
                String text = withoutComments(Files.readString(pom));
                if (!text.contains("<packaging>pom</packaging>")) {
                    libraries.add(ownArtifact(text));
                }
            }
        }
        libraries.add(ownArtifact(withoutComments(Files.readString(ROOT.resolve("producer-stamping/pom.xml")))));

        String bom = withoutComments(Files.readString(ROOT.resolve("bom/pom.xml")));
        String managed = bom.substring(bom.indexOf("<dependencyManagement>"));
        Set<String> listed = new TreeSet<>();
        Matcher m = ARTIFACT.matcher(managed);
        while (m.find()) {
            listed.add(m.group(1));
        }

        assertThat(listed).isEqualTo(libraries);
        assertThat(managed.split("<version>\\$\\{project.version}</version>", -1)).hasSize(listed.size() + 1);
    }

    @Test
    void the_bom_pins_netty_micrometer_and_slf4j_at_the_versions_the_build_uses() throws IOException {
        String bom = withoutComments(Files.readString(ROOT.resolve("bom/pom.xml")));
        String parent = withoutComments(Files.readString(ROOT.resolve("pom.xml")));

        assertThat(pinned(bom, "netty-bom")).isEqualTo(property(parent, "netty.version"));
        assertThat(pinned(bom, "micrometer-bom")).isEqualTo(property(parent, "micrometer.version"));
        assertThat(pinned(bom, "slf4j-api")).isEqualTo(property(parent, "slf4j.version"));
    }

    /** The version the BOM's dependency management gives {@code artifactId}. */
    private static String pinned(String bom, String artifactId) {
        Matcher m = Pattern.compile("<artifactId>" + Pattern.quote(artifactId) + "</artifactId>\\s*<version>([^<]+)</version>")
                .matcher(bom.substring(bom.indexOf("<dependencyManagement>")));
        assertThat(m.find()).as("the BOM manages " + artifactId).isTrue();
        return m.group(1);
    }

    private static String property(String pom, String name) {
        Matcher m = Pattern.compile("<" + Pattern.quote(name) + ">([^<]+)</" + Pattern.quote(name) + ">").matcher(pom);
        assertThat(m.find()).as("orderless-parent sets " + name).isTrue();
        return m.group(1);
    }

    @Test
    void the_bom_has_the_projects_version_and_no_parent() throws IOException {
        String bom = withoutComments(Files.readString(ROOT.resolve("bom/pom.xml")));
        assertThat(bom).doesNotContain("<parent>");
        assertThat(version(bom)).isEqualTo(version(withoutComments(Files.readString(ROOT.resolve("pom.xml")))));
    }

    private static String withoutComments(String pom) {
        return pom.replaceAll("(?s)<!--.*?-->", "");
    }

    /** The artifactId a POM declares for itself: the first one after its parent's. */
    private static String ownArtifact(String pom) {
        String own = pom.contains("</parent>") ? pom.substring(pom.indexOf("</parent>")) : pom;
        Matcher m = ARTIFACT.matcher(own);
        assertThat(m.find()).as("an artifactId in " + pom.lines().limit(20).toList()).isTrue();
        return m.group(1);
    }

    private static String version(String pom) {
        String own = pom.contains("</parent>") ? pom.substring(pom.indexOf("</parent>")) : pom;
        Matcher m = Pattern.compile("<version>([^<$]+)</version>").matcher(own);
        assertThat(m.find()).isTrue();
        return m.group(1);
    }
}
