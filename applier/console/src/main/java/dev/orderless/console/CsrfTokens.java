package dev.orderless.console;

import jakarta.servlet.http.HttpServletRequest;
import java.util.Map;
import java.util.Optional;
import org.springframework.util.ClassUtils;

/**
 * The CSRF token Spring Security put on the request, for the page to send back with an action; empty without
 * Spring Security (then nothing checks CSRF, and the console's own header is what keeps a cross-site form out).
 */
final class CsrfTokens {
    private static final boolean SPRING_SECURITY = ClassUtils.isPresent(
            "org.springframework.security.web.csrf.CsrfToken", CsrfTokens.class.getClassLoader());

    private CsrfTokens() {
    }

    static Optional<Map<String, String>> of(HttpServletRequest request) {
        return SPRING_SECURITY ? WithSpringSecurity.of(request) : Optional.empty();
    }

    /** Loaded only where Spring Security is: it names its types. */
    private static final class WithSpringSecurity {
        static Optional<Map<String, String>> of(HttpServletRequest request) {
            Object attribute = request.getAttribute(org.springframework.security.web.csrf.CsrfToken.class.getName());
            if (attribute instanceof org.springframework.security.web.csrf.CsrfToken token) {
                return Optional.of(Map.of("header", token.getHeaderName(), "token", token.getToken()));
            }
            return Optional.empty();
        }
    }
}
