package dev.orderless.demo;

import java.util.regex.Pattern;

/** URIs as the demo prints them: with any password replaced by {@code ***}. */
final class Uris {
    private static final Pattern PASSWORD = Pattern.compile("(://[^:/@]*):[^/]*@");

    private Uris() {
    }

    static String redacted(String uri) {
        return PASSWORD.matcher(uri).replaceFirst("$1:***@");
    }
}
