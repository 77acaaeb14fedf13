package dev.orderless.chaos;

import static org.assertj.core.api.Assertions.assertThat;

import com.sun.source.doctree.DocCommentTree;
import com.sun.source.doctree.LinkTree;
import com.sun.source.doctree.ReferenceTree;
import com.sun.source.doctree.SeeTree;
import com.sun.source.util.DocTreePath;
import com.sun.source.util.DocTreePathScanner;
import com.sun.source.util.DocTrees;
import com.sun.source.util.TreePath;
import java.io.IOException;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Stream;
import javax.lang.model.SourceVersion;
import javax.lang.model.element.Element;
import javax.lang.model.element.ElementKind;
import javax.lang.model.element.ExecutableElement;
import javax.lang.model.element.TypeElement;
import javax.lang.model.type.DeclaredType;
import javax.lang.model.type.TypeMirror;
import javax.lang.model.util.ElementFilter;
import javax.lang.model.util.Elements;
import javax.tools.Diagnostic;
import javax.tools.DiagnosticCollector;
import javax.tools.DocumentationTool;
import javax.tools.JavaFileObject;
import javax.tools.StandardJavaFileManager;
import javax.tools.ToolProvider;
import jdk.javadoc.doclet.Doclet;
import jdk.javadoc.doclet.DocletEnvironment;
import jdk.javadoc.doclet.Reporter;
import org.junit.jupiter.api.Test;

/**
 * The published Javadoc of the consumer and producer artifacts documents what it shows: every public and protected
 * type and member has a description, and no comment links to a type the Javadoc leaves out (package-private, or in an
 * {@code internal} package), which a reader sees as a bare name (issue 50: {@code ConfirmingPublisher} named
 * {@code PendingConfirm} and {@code WindowVerdict}; {@code Builder.meters()} and {@code DEFAULT_PREFETCH} said
 * nothing). orderless-core checks the first half with doclint {@code all} (its POM); the others tolerate a missing
 * {@code @param} or {@code @return}, not a member without a word. Run by the JDK's own javadoc, with a doclet that
 * only looks: {@link Gaps}.
 */
class JavadocGapsTest {
    private static final Path ROOT = Path.of("..");
    /** The artifacts checked here, by where their sources are. */
    private static final List<String> MODULES = List.of("applier/rabbit", "applier/rabbit-amqp10", "producer-stamping",
            "applier/test-support-chaos", "applier/message", "applier/kafka", "applier/test-support-kafka");

    @Test
    void every_documented_member_says_something_and_links_only_to_documented_types() throws IOException {
        DocumentationTool javadoc = ToolProvider.getSystemDocumentationTool();
        DiagnosticCollector<JavaFileObject> diagnostics = new DiagnosticCollector<>();
        List<String> gaps = new ArrayList<>();
        try (StandardJavaFileManager files = javadoc.getStandardFileManager(diagnostics, Locale.ROOT, null)) {
            List<Path> sources = new ArrayList<>();
            for (String module : MODULES) {
                sources.addAll(published(ROOT.resolve(module).resolve("src/main/java")));
            }
            StringWriter out = new StringWriter();
            boolean ran = javadoc.getTask(out, files, diagnostics, Gaps.class,
                    List.of("-classpath", System.getProperty("java.class.path"), "-quiet"),
                    files.getJavaFileObjectsFromPaths(sources)).call();
            for (Diagnostic<? extends JavaFileObject> d : diagnostics.getDiagnostics()) {
                if (d.getKind() == Diagnostic.Kind.WARNING && d.getMessage(Locale.ROOT).startsWith(Gaps.PREFIX)) {
                    gaps.add(d.getMessage(Locale.ROOT).substring(Gaps.PREFIX.length()));
                }
            }
            assertThat(ran).as("javadoc ran: %s %s", out, diagnostics.getDiagnostics()).isTrue();
        }
        assertThat(gaps).as("public Javadoc that leaves its reader with a bare name or nothing (%d)", gaps.size())
                .isEmpty();
    }

    /** The sources Javadoc publishes: every package but the internal ones. */
    private static List<Path> published(Path root) throws IOException {
        try (Stream<Path> walk = Files.walk(root)) {
            return walk.filter(p -> p.toString().endsWith(".java"))
                    .filter(p -> !root.relativize(p).toString().matches("(.*/)?internal(/.*)?")).sorted().toList();
        }
    }

    /**
     * A doclet that writes nothing: for each element the Javadoc includes, a warning {@value #PREFIX}... when it has no
     * description (an implicit member, and a method whose comment is inherited, need none) or its comment links to an
     * element of a type the Javadoc leaves out.
     */
    public static final class Gaps implements Doclet {
        static final String PREFIX = "gap: ";
        private Reporter reporter;

        @Override
        public void init(Locale locale, Reporter reporter) {
            this.reporter = reporter;
        }

        @Override
        public String getName() {
            return "gaps";
        }

        @Override
        public Set<? extends Option> getSupportedOptions() {
            return Set.of();
        }

        @Override
        public SourceVersion getSupportedSourceVersion() {
            return SourceVersion.latest();
        }

        @Override
        public boolean run(DocletEnvironment environment) {
            Set<String> found = new TreeSet<>();
            for (TypeElement type : ElementFilter.typesIn(environment.getIncludedElements())) {
                check(environment, type, found);
                for (Element member : type.getEnclosedElements()) {
                    // a record component is documented by its record's @param
                    if (!member.getKind().isClass() && !member.getKind().isInterface()
                            && member.getKind() != ElementKind.RECORD_COMPONENT && environment.isIncluded(member)) {
                        check(environment, member, found);
                    }
                }
            }
            found.forEach(gap -> reporter.print(Diagnostic.Kind.WARNING, PREFIX + gap));
            return true;
        }

        private static void check(DocletEnvironment environment, Element element, Set<String> found) {
            DocTrees trees = environment.getDocTrees();
            Elements elements = environment.getElementUtils();
            String name = name(element);
            DocCommentTree comment = trees.getDocCommentTree(element);
            if (comment == null || comment.getFullBody().isEmpty()) {
                if (!implicit(elements, element) && !inherits(environment, element)) {
                    found.add(name + ": no description");
                }
            }
            TreePath path = trees.getPath(element);
            if (comment == null || path == null) {
                return;
            }
            new DocTreePathScanner<Void, Void>() {
                @Override
                public Void visitLink(LinkTree link, Void unused) {
                    leftOut(link.getReference());
                    return super.visitLink(link, unused);
                }

                @Override
                public Void visitSee(SeeTree see, Void unused) {
                    see.getReference().stream().filter(ReferenceTree.class::isInstance)
                            .forEach(ref -> leftOut((ReferenceTree) ref));
                    return super.visitSee(see, unused);
                }

                private void leftOut(ReferenceTree reference) {
                    Element target = trees.getElement(new DocTreePath(getCurrentPath(), reference));
                    TypeElement type = target == null ? null : typeOf(target);
                    if (type != null && !documented(elements, type)) {
                        found.add(name + ": links to " + reference.getSignature() + ", which the Javadoc leaves out");
                    }
                }
            }.scan(new DocTreePath(path, comment), null);
        }

        /**
         * An orderless type some artifact's Javadoc shows (this run's, or another's: the core's, say): public all the
         * way out, outside the {@code internal} packages. Types of other libraries are their Javadoc's business.
         */
        private static boolean documented(Elements elements, TypeElement type) {
            String pkg = elements.getPackageOf(type).getQualifiedName().toString();
            if (!pkg.startsWith("dev.orderless")) {
                return true;
            }
            for (Element at = type; at instanceof TypeElement; at = at.getEnclosingElement()) {
                if (!at.getModifiers().contains(javax.lang.model.element.Modifier.PUBLIC)) {
                    return false;
                }
            }
            return !pkg.matches("(.*\\.)?internal(\\..*)?");
        }

        /**
         * Declared by the language, not the source: a record's accessors and canonical constructor, an enum's
         * {@code values()} and {@code valueOf(String)}, a default constructor.
         */
        private static boolean implicit(Elements elements, Element element) {
            if (elements.getOrigin(element) != Elements.Origin.EXPLICIT) {
                return true;
            }
            Element owner = element.getEnclosingElement();
            String name = element.getSimpleName().toString();
            if (owner.getKind() == ElementKind.ENUM && element instanceof ExecutableElement method
                    && (name.equals("values") && method.getParameters().isEmpty()
                    || name.equals("valueOf") && method.getParameters().size() == 1)) {
                return true;
            }
            return owner.getKind() == ElementKind.RECORD && (element.getKind() == ElementKind.CONSTRUCTOR
                    || ElementFilter.recordComponentsIn(owner.getEnclosedElements()).stream()
                    .anyMatch(c -> element.equals(c.getAccessor())));
        }

        /** A method that overrides one of a supertype: Javadoc shows the comment it inherits. */
        private static boolean inherits(DocletEnvironment environment, Element element) {
            if (!(element instanceof ExecutableElement method) || element.getKind() != ElementKind.METHOD) {
                return false;
            }
            TypeElement owner = (TypeElement) method.getEnclosingElement();
            List<TypeMirror> supertypes = new ArrayList<>(environment.getTypeUtils().directSupertypes(owner.asType()));
            while (!supertypes.isEmpty()) {
                TypeMirror next = supertypes.remove(0);
                if (next instanceof DeclaredType declared) {
                    for (ExecutableElement other : ElementFilter.methodsIn(declared.asElement().getEnclosedElements())) {
                        if (environment.getElementUtils().overrides(method, other, owner)) {
                            return true;
                        }
                    }
                    supertypes.addAll(environment.getTypeUtils().directSupertypes(next));
                }
            }
            return false;
        }

        private static TypeElement typeOf(Element element) {
            Element at = element;
            while (at != null && !(at instanceof TypeElement)) {
                at = at.getEnclosingElement();
            }
            return (TypeElement) at;
        }

        private static String name(Element element) {
            return element instanceof TypeElement type ? type.getQualifiedName().toString()
                    : typeOf(element).getQualifiedName() + "." + element;
        }
    }
}
