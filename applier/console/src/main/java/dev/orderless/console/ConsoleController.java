package dev.orderless.console;

import static com.mongodb.client.model.Filters.eq;

import dev.orderless.OrderlessException;
import dev.orderless.amqp.DeadLetterQueue;
import dev.orderless.boot.OrderlessProperties;
import dev.orderless.console.fleet.Fleet;
import dev.orderless.console.fleet.InstanceSnapshot;
import dev.orderless.history.Read;
import dev.orderless.history.Version;
import dev.orderless.history.Versions;
import jakarta.servlet.http.HttpServletRequest;
import java.io.IOException;
import java.io.InputStream;
import java.security.Principal;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import org.bson.BsonDocument;
import org.bson.json.JsonMode;
import org.bson.json.JsonWriterSettings;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestHeader;
import org.springframework.web.bind.annotation.RequestMapping;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;

/**
 * The console's page and JSON, under {@code orderless.console.path}: this instance and its queues' backlog
 * ({@code api/overview}), every instance of the fleet ({@code api/fleet}), what is wrong now ({@code api/banner}),
 * the dead letters, and an entity's document and versions. Reads answer whoever the application's security
 * lets in; the three actions ({@code POST api/dead-letters/replay|park|purge}) answer 403 and do nothing unless the
 * user has the action role and the request carries {@value #ACTION_HEADER} (which a cross-site form cannot send).
 * Every failure is a JSON body {@code {"error": "..."}} in one line.
 */
@RestController
@RequestMapping("${orderless.console.path:/orderless/console}")
final class ConsoleController {
    private static final Logger log = LoggerFactory.getLogger(ConsoleController.class);
    /** The header the page sends with every action. */
    static final String ACTION_HEADER = "X-Orderless-Console";
    private static final Set<String> ASSETS = Set.of("console.js", "console.css");
    private static final int MAX_LETTERS = 1000;
    private static final JsonWriterSettings JSON = JsonWriterSettings.builder().outputMode(JsonMode.RELAXED)
            .indent(true).build();
    /** How a version's operation is shown: as the message that carries it. */
    private static final dev.orderless.message.Envelope ENVELOPE = dev.orderless.message.Envelope.ofDefaults();

    private final ConsoleSources sources;
    private final OrderlessProperties.Console properties;
    private final Fleet fleet;

    ConsoleController(ConsoleSources sources, OrderlessProperties.Console properties, Fleet fleet) {
        this.sources = sources;
        this.properties = properties;
        this.fleet = fleet;
    }

    @GetMapping({"", "/"})
    ResponseEntity<byte[]> page(HttpServletRequest request) throws IOException {
        if (!request.getRequestURI().endsWith("/")) {   // relative asset paths need the trailing slash
            return ResponseEntity.status(HttpStatus.FOUND).header("Location", request.getRequestURI() + "/").build();
        }
        return asset("index.html", MediaType.TEXT_HTML);
    }

    @GetMapping("/assets/{name}")
    ResponseEntity<byte[]> asset(@PathVariable String name) throws IOException {
        if (!ASSETS.contains(name)) {
            return ResponseEntity.notFound().build();
        }
        return asset(name, name.endsWith(".js") ? MediaType.valueOf("text/javascript") : MediaType.valueOf("text/css"));
    }

    private static ResponseEntity<byte[]> asset(String name, MediaType type) throws IOException {
        try (InputStream in = ConsoleController.class.getResourceAsStream("static/" + name)) {
            if (in == null) {
                throw new IllegalStateException("the console's " + name + " is missing from its jar");
            }
            return ResponseEntity.ok().contentType(type)
                    // no script but the console's own, no inline script or style, no framing
                    .header("Content-Security-Policy", "default-src 'self'; script-src 'self'; style-src 'self';"
                            + " img-src 'self' data:; object-src 'none'; base-uri 'none'; frame-ancestors 'none'")
                    .header("X-Content-Type-Options", "nosniff")
                    .header("Cache-Control", "no-store")
                    .body(in.readAllBytes());
        }
    }

    /** Who is looking, whether they may act, and the CSRF token the page sends with an action. */
    @GetMapping("/api/session")
    Map<String, Object> session(HttpServletRequest request) {
        Map<String, Object> session = new LinkedHashMap<>();
        Principal user = request.getUserPrincipal();
        session.put("user", user == null ? null : user.getName());
        session.put("canAct", mayAct(request));
        session.put("actionRole", properties.actionRole());
        session.put("actionHeader", ACTION_HEADER);
        session.put("csrf", CsrfTokens.of(request).orElse(null));
        return session;
    }

    /**
     * This instance (its consumers, feeders, outbox and passes, as they are now, with the counters the page turns
     * into rates; the same figures it reports to the fleet), who it is, and each work queue's backlog.
     */
    @GetMapping("/api/overview")
    Map<String, Object> overview() {
        Map<String, Object> overview = new LinkedHashMap<>();
        overview.put("time", sources.clock().millis());
        overview.put("instance", fleet.instance());
        InstanceSnapshot snapshot = fleet.snapshot();
        overview.put("consumers", snapshot.consumers());
        overview.put("feeders", snapshot.feeders());
        snapshot.outbox().ifPresent(outbox -> overview.put("outbox", outbox));
        overview.put("passes", snapshot.passes());
        overview.put("history", sources.history().isPresent());
        overview.put("queues", fleet.queues());
        return overview;
    }

    /** Every instance that reported in the last day: up, gone (silent for three intervals) or stopped. */
    @GetMapping("/api/fleet")
    Map<String, Object> fleet() {
        return fleet.fleet();
    }

    /** What is wrong now, worst first, each with the page's route that shows it. */
    @GetMapping("/api/banner")
    Map<String, Object> banner() {
        return fleet.banner();
    }

    /** Every consumer's dead letters, grouped by kind and reason, and the kinds there are. */
    @GetMapping("/api/dead-letters")
    Map<String, Object> deadLetters(@RequestParam(defaultValue = "1000") int max) {
        Map<String, Object> answer = new LinkedHashMap<>();
        List<Map<String, Object>> queues = new ArrayList<>();
        for (ConsoleSources.Consumer consumer : sources.consumers()) {
            Map<String, Object> q = new LinkedHashMap<>();
            q.put("queue", consumer.queue());
            try {
                List<DeadLetterQueue.Group> groups = consumer.deadLetters().list(Math.min(Math.max(max, 1), MAX_LETTERS));
                q.put("kinds", DeadLetterQueue.byKind(groups));
                q.put("groups", groups);
                // the groups count the first letters only: the page says so when the queue holds more
                q.put("listed", groups.stream().mapToLong(DeadLetterQueue.Group::count).sum());
                q.put("depth", consumer.deadLetters().depth());
            } catch (OrderlessException e) {
                q.put("error", e.getMessage());
            }
            queues.add(q);
        }
        answer.put("queues", queues);
        answer.put("kinds", DeadLetterQueue.KINDS);
        answer.put("replayGrace", sources.grace().map(Duration::toString).orElse(null));
        return answer;
    }

    /** The first letters of one kind (or every kind), each with its body, reason and what the broker recorded. */
    @GetMapping("/api/dead-letters/letters")
    ResponseEntity<Map<String, Object>> letters(@RequestParam String queue, @RequestParam Optional<String> kind,
                                                @RequestParam(defaultValue = "20") int max) {
        Optional<String> ofKind = kind.map(String::strip).filter(k -> !k.isEmpty());
        Optional<ResponseEntity<Map<String, Object>>> unknown = unknownQueueOrKind(queue, ofKind);
        if (unknown.isPresent()) {
            return unknown.get();
        }
        Optional<ConsoleSources.Consumer> consumer = sources.consumer(queue);
        List<Map<String, Object>> letters = new ArrayList<>();
        for (DeadLetterQueue.Letter letter : consumer.get().deadLetters().peek(ofKind, Math.min(Math.max(max, 1), 100))) {
            Map<String, Object> l = new LinkedHashMap<>();
            l.put("kind", letter.kind());
            l.put("reason", letter.reason());
            l.put("entity", letter.entity().orElse(null));
            l.put("seq", letter.seq().isPresent() ? letter.seq().getAsLong() : null);
            l.put("letterId", letter.letterId().orElse(null));
            l.put("deadLettered", letter.deadLettered().map(Object::toString).orElse(null));
            l.put("replays", letter.replays());
            l.put("body", letter.body());
            l.put("deaths", letter.deaths());
            letters.add(l);
        }
        return ResponseEntity.ok(Map.of("queue", queue, "letters", letters));
    }

    /**
     * Replays, parks or purges up to {@code max} letters of {@code kind} (every kind if absent; a purge needs one
     * of the two). A replay refuses letters older than the grace, as {@link DeadLetterQueue#replay} does.
     */
    @PostMapping("/api/dead-letters/{action}")
    ResponseEntity<Map<String, Object>> act(@PathVariable String action, @RequestParam String queue,
                                            @RequestParam Optional<String> kind, @RequestParam Optional<Integer> max,
                                            @RequestHeader(name = ACTION_HEADER, required = false) String header,
                                            HttpServletRequest request) {
        if (header == null) {
            return refused(HttpStatus.FORBIDDEN, "an action needs the " + ACTION_HEADER + " header the console's page"
                    + " sends: refused, nothing changed");
        }
        if (!mayAct(request)) {
            Principal user = request.getUserPrincipal();
            return refused(HttpStatus.FORBIDDEN, (user == null ? "anonymous" : "user '" + user.getName() + "'")
                    + " lacks the role " + properties.actionRole() + " (orderless.console.action-role) that replaying,"
                    + " parking and purging need: refused, nothing changed");
        }
        if (!Set.of("replay", "park", "purge").contains(action)) {
            return refused(HttpStatus.NOT_FOUND, "unknown action '" + action + "': replay, park or purge");
        }
        Optional<String> ofKind = kind.map(String::strip).filter(k -> !k.isEmpty());
        Optional<ResponseEntity<Map<String, Object>>> unknown = unknownQueueOrKind(queue, ofKind);
        if (unknown.isPresent()) {
            return unknown.get();
        }
        Optional<ConsoleSources.Consumer> consumer = sources.consumer(queue);
        if (max.isPresent() && max.get() < 1) {
            return refused(HttpStatus.BAD_REQUEST, "max must be at least 1, was " + max.get());
        }
        if (action.equals("purge") && ofKind.isEmpty() && max.isEmpty()) {
            return refused(HttpStatus.BAD_REQUEST, "purge drops letters for good: give a kind, or max, or both");
        }
        int limit = max.orElse(MAX_LETTERS);
        DeadLetterQueue letters = consumer.get().deadLetters();
        String what = ofKind.map(k -> "of kind " + k).orElse("of every kind");
        String who = Optional.ofNullable(request.getUserPrincipal()).map(Principal::getName).orElse("anonymous");
        String result = switch (action) {
            case "replay" -> {
                // without a grace the collection is not compacted: no letter is too old to replay
                DeadLetterQueue.Replay replay = sources.grace().map(grace -> letters.replay(ofKind, limit, grace,
                        sources.clock())).orElseGet(() -> letters.replay(ofKind, limit));
                long refused = replay.refused().values().stream().mapToLong(Long::longValue).sum();
                yield "replayed " + replay.replayed() + " letter(s) " + what + " to " + queue
                        + (refused == 0 ? "" : "; refused " + refused + " older than the replay grace " + sources.grace()
                        .map(Duration::toString).orElse("") + " (they stay: park or purge them)");
            }
            case "park" -> "parked " + letters.park(ofKind, limit) + " letter(s) " + what;
            default -> "purged " + letters.purge(ofKind, limit) + " letter(s) " + what;
        };
        log.info("console: {} by {} on the dead letters of '{}'", result, who, queue);
        return ResponseEntity.ok(Map.of("result", result));
    }

    /**
     * An entity's live document and, with history on, its versions. The id is a parameter, not a path segment: an
     * entity id may hold any character, '/' and '%' included, which servers and firewalls refuse in a path.
     */
    @GetMapping("/api/entity")
    Map<String, Object> entity(@RequestParam String id) {
        Map<String, Object> entity = new LinkedHashMap<>();
        entity.put("id", id);
        BsonDocument live = sources.entities().find(eq("_id", id)).first();
        entity.put("document", live == null ? null : live.toJson(JSON));
        entity.put("history", sources.history().isPresent());
        sources.history().ifPresent(history -> {
            Versions versions = history.versions(id);
            List<Map<String, Object>> list = new ArrayList<>();
            for (Version version : versions.versions()) {
                Map<String, Object> v = new LinkedHashMap<>();
                v.put("seq", version.seq());
                v.put("op", new String(ENVELOPE.encode(version.op()), java.nio.charset.StandardCharsets.UTF_8));
                // what applying it in seq order did, as the live document holds it (a re-add with new attributes
                // is a change; an operation a later one overtook changes nothing): Version.changed
                v.put("outcome", version.changed() ? "changed the state" : "no effect (superseded)");
                v.put("recordedAt", version.recordedAt().toString());
                v.put("state", EntityStates.describe(version.after(), sources.schema()));
                list.add(v);
            }
            entity.put("versions", list);
            entity.put("horizon", versions.horizon());
            entity.put("unknowable", versions.unknowable().orElse(null));
            entity.put("late", versions.late().stream().map(Object::toString).toList());
        });
        return entity;
    }

    /** The entity's state as of {@code seq}, or why the history cannot tell. */
    @GetMapping("/api/entity/as-of")
    ResponseEntity<Map<String, Object>> asOf(@RequestParam String id, @RequestParam long seq) {
        if (sources.history().isEmpty()) {
            return refused(HttpStatus.NOT_FOUND, "history is off: turn it on (orderless.history.enabled) to read"
                    + " states as of a seq");
        }
        Read<dev.orderless.apply.EntityState> read = sources.history().get().asOf(id, seq);
        Map<String, Object> answer = new LinkedHashMap<>();
        answer.put("id", id);
        answer.put("seq", seq);
        if (read instanceof Read.Known<dev.orderless.apply.EntityState> known) {
            answer.put("state", EntityStates.describe(known.answer(), sources.schema()));
        } else if (read instanceof Read.Unknowable<dev.orderless.apply.EntityState> unknowable) {
            answer.put("unknowable", unknowable.reason());
        }
        return ResponseEntity.ok(answer);
    }

    /**
     * A broker or MongoDB that cannot answer, or a refused input, as one line: 503 when it may pass by itself, 400 for
     * bad input, 500 otherwise.
     */
    @org.springframework.web.bind.annotation.ExceptionHandler(OrderlessException.class)
    ResponseEntity<Map<String, Object>> failed(OrderlessException e) {
        HttpStatus status = e instanceof dev.orderless.TransientException ? HttpStatus.SERVICE_UNAVAILABLE
                : e instanceof dev.orderless.InvalidInputException ? HttpStatus.BAD_REQUEST : HttpStatus.INTERNAL_SERVER_ERROR;
        log.warn("console: {}", e.getMessage());
        return refused(status, e.getMessage());
    }

    /** A parameter missing or not of its type, in the console's one-line JSON rather than Spring's error body. */
    @org.springframework.web.bind.annotation.ExceptionHandler({
            org.springframework.web.bind.MissingServletRequestParameterException.class,
            org.springframework.web.method.annotation.MethodArgumentTypeMismatchException.class})
    ResponseEntity<Map<String, Object>> badParameter(Exception e) {
        String what = e instanceof org.springframework.web.method.annotation.MethodArgumentTypeMismatchException mismatch
                ? "parameter '" + mismatch.getName() + "' must be " + (mismatch.getRequiredType() == null ? "valid"
                : "a " + mismatch.getRequiredType().getSimpleName().toLowerCase(java.util.Locale.ROOT))
                + ", was '" + mismatch.getValue() + "'"
                : e.getMessage();
        return refused(HttpStatus.BAD_REQUEST, what);
    }

    /** MongoDB failing a console read (the live document, a count): 503 in one line, the page keeps polling. */
    @org.springframework.web.bind.annotation.ExceptionHandler(com.mongodb.MongoException.class)
    ResponseEntity<Map<String, Object>> mongoFailed(com.mongodb.MongoException e) {
        String why = "MongoDB did not answer the console's read (" + e.getClass().getSimpleName() + ": "
                + String.valueOf(e.getMessage()).lines().findFirst().orElse("") + "); check that it is up";
        log.warn("console: {}", why);
        return refused(HttpStatus.SERVICE_UNAVAILABLE, why);
    }

    /** 404 for a queue no consumer here reads, 400 for a kind no letter can have; empty if both are known. */
    private Optional<ResponseEntity<Map<String, Object>>> unknownQueueOrKind(String queue, Optional<String> kind) {
        if (sources.consumer(queue).isEmpty()) {
            return Optional.of(refused(HttpStatus.NOT_FOUND, "no consumer of queue '" + queue + "' here"));
        }
        if (kind.isPresent() && !DeadLetterQueue.KINDS.contains(kind.get())) {
            return Optional.of(refused(HttpStatus.BAD_REQUEST, "unknown kind '" + kind.get() + "': one of "
                    + DeadLetterQueue.KINDS));
        }
        return Optional.empty();
    }

    private boolean mayAct(HttpServletRequest request) {
        return request.getUserPrincipal() != null && request.isUserInRole(properties.actionRole());
    }

    private static ResponseEntity<Map<String, Object>> refused(HttpStatus status, String error) {
        return ResponseEntity.status(status).body(Map.of("error", error));
    }
}
