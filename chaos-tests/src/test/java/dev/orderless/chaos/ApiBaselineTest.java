package dev.orderless.chaos;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.lang.reflect.Constructor;
import java.lang.reflect.Field;
import java.lang.reflect.Member;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * The public API of every library artifact, compared with the listing checked in under {@code api/}: an
 * incompatible change (a public type or member removed or changed) is a decision, made by updating the listing in
 * the same commit (and saying so in CHANGELOG.md), never an accident. Each line is a public type of a package that
 * is not {@code internal}, or one of its public or protected members, as the compiled classes have it. An addition
 * fails too, so the listing stays the API as it is; rewrite the listings with
 * {@code mvn -B -pl chaos-tests test -Dtest=ApiBaselineTest -Dorderless.api.accept=true} and review the diff.
 */
class ApiBaselineTest {
    private static final Path ROOT = Path.of("..");
    /** Each library artifact and where its classes are built. */
    private static final Map<String, String> ARTIFACTS = new TreeMap<>(Map.ofEntries(
            Map.entry("orderless-console", "applier/console"),
            Map.entry("orderless-core", "applier/core"),
            Map.entry("orderless-kafka", "applier/kafka"),
            Map.entry("orderless-message", "applier/message"),
            Map.entry("orderless-rabbit", "applier/rabbit"),
            Map.entry("orderless-rabbit-amqp10", "applier/rabbit-amqp10"),
            Map.entry("orderless-rabbit-broker", "applier/rabbit-broker"),
            Map.entry("orderless-producer-stamping", "producer-stamping"),
            Map.entry("orderless-stamp", "applier/stamp"),
            Map.entry("orderless-spring-boot-autoconfigure", "applier/spring-boot-autoconfigure"),
            Map.entry("orderless-test-support", "applier/test-support"),
            Map.entry("orderless-test-support-mongodb", "applier/test-support-mongodb"),
            Map.entry("orderless-test-support-chaos", "applier/test-support-chaos"),
            Map.entry("orderless-test-support-kafka", "applier/test-support-kafka")));

    @Test
    void every_artifacts_public_api_is_the_one_checked_in() throws Exception {
        boolean accept = Boolean.getBoolean("orderless.api.accept");
        List<String> differences = new ArrayList<>();
        for (Map.Entry<String, String> artifact : ARTIFACTS.entrySet()) {
            List<String> now = api(ROOT.resolve(artifact.getValue()).resolve("target/classes"));
            Path listing = ROOT.resolve("api").resolve(artifact.getKey() + ".txt");
            if (accept) {
                Files.createDirectories(listing.getParent());
                Files.write(listing, now, StandardCharsets.UTF_8);
                continue;
            }
            List<String> checkedIn = Files.exists(listing) ? Files.readAllLines(listing, StandardCharsets.UTF_8) : List.of();
            Set<String> removed = new LinkedHashSet<>(checkedIn);
            now.forEach(removed::remove);
            Set<String> added = new LinkedHashSet<>(now);
            checkedIn.forEach(added::remove);
            removed.forEach(line -> differences.add(artifact.getKey() + ": INCOMPATIBLE, removed or changed: " + line));
            added.forEach(line -> differences.add(artifact.getKey() + ": added: " + line));
        }
        assertThat(differences).as("the public API differs from api/*.txt; if that is meant, rewrite the listings"
                + " (-Dorderless.api.accept=true), review their diff, and say what changed for users in CHANGELOG.md:\n"
                + String.join("\n", differences)).isEmpty();
    }

    /** The public API of the classes under {@code classes}: one line per type, then one per member, sorted. */
    private static List<String> api(Path classes) throws IOException, ClassNotFoundException {
        TreeMap<String, Set<String>> types = new TreeMap<>();
        List<String> names;
        try (Stream<Path> files = Files.walk(classes)) {
            names = files.map(classes::relativize).map(Path::toString)
                    .filter(name -> name.endsWith(".class") && !name.endsWith("package-info.class")
                            && !name.endsWith("module-info.class"))
                    .map(name -> name.substring(0, name.length() - ".class".length()).replace('/', '.'))
                    .filter(name -> !name.contains(".internal.") && !name.endsWith(".internal"))
                    .toList();
        }
        for (String name : names) {
            Class<?> type = Class.forName(name, false, ApiBaselineTest.class.getClassLoader());
            if (!visible(type)) {
                continue;
            }
            Set<String> lines = new TreeSet<>();
            for (Constructor<?> c : type.getDeclaredConstructors()) {
                if (visible(c)) {
                    lines.add("  " + c.toGenericString());
                }
            }
            for (Method m : type.getDeclaredMethods()) {
                if (visible(m) && (!m.isBridge() || visibilityBridge(m))) {
                    lines.add("  " + m.toGenericString());
                }
            }
            for (Field f : type.getDeclaredFields()) {
                if (visible(f) && !f.isSynthetic()) {
                    lines.add("  " + f.toGenericString());
                }
            }
            types.put(describe(type), lines);
        }
        List<String> api = new ArrayList<>();
        types.forEach((type, members) -> {
            api.add(type);
            api.addAll(members);
        });
        return api;
    }

    /**
     * A bridge javac writes into a public class for a public method it inherits from a class that is not public
     * (a package-private base): users call it through this class, so it is API. A bridge beside a method of the
     * same name and arity (a generic or covariant override's) is not.
     */
    private static boolean visibilityBridge(Method bridge) {
        for (Method m : bridge.getDeclaringClass().getDeclaredMethods()) {
            if (!m.isBridge() && m.getName().equals(bridge.getName())
                    && m.getParameterCount() == bridge.getParameterCount()) {
                return false;
            }
        }
        return true;
    }

    /** A type users can name: public, and every type enclosing it public too. */
    private static boolean visible(Class<?> type) {
        for (Class<?> t = type; t != null; t = t.getEnclosingClass()) {
            if (!Modifier.isPublic(t.getModifiers()) || t.isAnonymousClass() || t.isLocalClass()) {
                return false;
            }
        }
        return true;
    }

    private static boolean visible(Member member) {
        int modifiers = member.getModifiers();
        boolean extendable = !Modifier.isFinal(member.getDeclaringClass().getModifiers());
        return Modifier.isPublic(modifiers) || Modifier.isProtected(modifiers) && extendable;
    }

    private static String describe(Class<?> type) {
        String kind = type.isAnnotation() ? "@interface" : type.isInterface() ? "interface" : type.isEnum() ? "enum"
                : type.isRecord() ? "record" : "class";
        StringBuilder line = new StringBuilder(Modifier.toString(type.getModifiers()
                & (Modifier.ABSTRACT | Modifier.FINAL | Modifier.STATIC) & (type.isInterface() ? Modifier.STATIC : ~0)))
                .append(type.isSealed() ? " sealed" : "").append(' ').append(kind).append(' ').append(type.getName());
        if (type.getTypeParameters().length > 0) {
            List<String> parameters = new ArrayList<>();
            for (var parameter : type.getTypeParameters()) {
                parameters.add(parameter.getTypeName());
            }
            line.append('<').append(String.join(",", parameters)).append('>');
        }
        if (type.getGenericSuperclass() != null && type.getSuperclass() != Object.class && !type.isEnum()
                && !type.isRecord()) {
            line.append(" extends ").append(type.getGenericSuperclass().getTypeName());
        }
        if (type.getGenericInterfaces().length > 0) {
            line.append(type.isInterface() ? " extends " : " implements ");
            List<String> interfaces = new ArrayList<>();
            for (var i : type.getGenericInterfaces()) {
                interfaces.add(i.getTypeName());
            }
            line.append(String.join(", ", interfaces));
        }
        if (type.isSealed()) {
            List<String> permitted = new ArrayList<>();
            for (Class<?> subclass : type.getPermittedSubclasses()) {
                permitted.add(subclass.getName());
            }
            permitted.sort(null);
            line.append(" permits ").append(String.join(", ", permitted));
        }
        return line.toString().strip();
    }
}
