package dev.orderless.console;

import static com.mongodb.client.model.Filters.eq;

import dev.orderless.InvalidInputException;
import dev.orderless.OrderlessException;
import dev.orderless.console.audit.AuditLog;
import dev.orderless.console.letters.LetterActions;
import dev.orderless.console.letters.LetterQuery;
import dev.orderless.console.letters.LetterStatus;
import dev.orderless.console.letters.LetterStore;
import dev.orderless.console.letters.StoredLetter;
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
import java.time.Instant;
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
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;

/**
 * The console's page and JSON, under {@code orderless.console.path}: this instance and its queues' backlog
 * ({@code api/overview}), every instance of the fleet ({@code api/fleet}), what is wrong now ({@code api/banner}),
 * the dead letters, and an entity's document and versions. Reads answer whoever the application's security
 * lets in; the actions ({@code POST api/letters/replay|park|unpark|purge|edit-replay}) answer 403 and do nothing unless the
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
    private static final JsonWriterSettings JSON = JsonWriterSettings.builder().outputMode(JsonMode.RELAXED)
            .indent(true).build();
    /** How a version's operation is shown: as the message that carries it. */
    private static final dev.orderless.message.Envelope ENVELOPE = dev.orderless.message.Envelope.ofDefaults();

    private final ConsoleSources sources;
    private final OrderlessProperties.Console properties;
    private final Fleet fleet;
    private final ConsoleLetters letters;

    ConsoleController(ConsoleSources sources, OrderlessProperties.Console properties, Fleet fleet,
                      ConsoleLetters letters) {
        this.sources = sources;
        this.properties = properties;
        this.fleet = fleet;
        this.letters = letters;
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

    /** The dead letters by queue: how many wait and are parked, by kind, and grouped by kind and cause. */
    @GetMapping("/api/letters/groups")
    Map<String, Object> letterGroups() {
        Instant now = sources.clock().instant();
        Map<String, Map<String, Object>> queues = new LinkedHashMap<>();
        for (ConsoleSources.Consumer consumer : sources.consumers()) {
            queue(queues, consumer.queue()).put("deadLetterQueue", consumer.deadLetters().deadLetterQueue());
        }
        for (LetterStore.Group group : letters.store().groups()) {
            Map<String, Object> q = queue(queues, group.queue());
            @SuppressWarnings("unchecked")
            Map<String, Long> kinds = (Map<String, Long>) q.get("kinds");
            kinds.merge(group.kind(), group.count(), Long::sum);
            @SuppressWarnings("unchecked")
            List<Map<String, Object>> groups = (List<Map<String, Object>>) q.get("groups");
            Map<String, Object> g = new LinkedHashMap<>();
            g.put("kind", group.kind());
            g.put("reason", group.reason());
            g.put("count", group.count());
            g.put("entities", group.entities());
            g.put("oldestSeconds", Duration.between(group.oldest(), now).toSeconds());
            g.put("newestSeconds", Duration.between(group.newest(), now).toSeconds());
            groups.add(g);
        }
        for (Map.Entry<String, Map<String, Object>> q : queues.entrySet()) {
            LetterQuery of = LetterQuery.dead().withQueue(q.getKey());
            @SuppressWarnings("unchecked")
            Map<String, Long> kinds = (Map<String, Long>) q.getValue().get("kinds");
            // the groups count every dead letter once: their sum is the queue's, without another pass
            q.getValue().put("dead", kinds.values().stream().mapToLong(Long::longValue).sum());
            q.getValue().put("parked", letters.store().count(of.withStatuses(List.of(LetterStatus.PARKED))));
            Map<String, Long> sorted = new LinkedHashMap<>();
            kinds.entrySet().stream().sorted(Map.Entry.<String, Long>comparingByValue().reversed()
                    .thenComparing(Map.Entry.comparingByKey())).forEach(e -> sorted.put(e.getKey(), e.getValue()));
            q.getValue().put("kinds", sorted);
        }
        Map<String, Object> answer = new LinkedHashMap<>();
        answer.put("queues", new ArrayList<>(queues.values()));
        answer.put("replayGrace", sources.grace().map(Duration::toString).orElse(null));
        return answer;
    }

    private static Map<String, Object> queue(Map<String, Map<String, Object>> queues, String queue) {
        return queues.computeIfAbsent(queue, q -> {
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("queue", q);
            m.put("deadLetterQueue", null);
            m.put("kinds", new LinkedHashMap<String, Long>());
            m.put("groups", new ArrayList<Map<String, Object>>());
            return m;
        });
    }

    /** The letters a filter chooses, newest first, a page at a time. */
    @GetMapping("/api/letters")
    Map<String, Object> letters(@RequestParam Map<String, String> parameters,
                                @RequestParam(defaultValue = "50") int limit) {
        LetterQuery query = query(parameters, Optional.of(LetterStatus.DEAD));
        if (limit < 1 || limit > 500) {
            throw new InvalidInputException("limit must be from 1 to 500, was " + limit);
        }
        LetterStore.Page page = letters.store().find(query, Optional.ofNullable(parameters.get("after"))
                .filter(a -> !a.isBlank()), limit);
        Instant now = sources.clock().instant();
        Map<String, Object> answer = new LinkedHashMap<>();
        answer.put("total", page.total());
        answer.put("letters", page.letters().stream().map(l -> letter(l, now)).toList());
        answer.put("next", page.next().orElse(null));
        return answer;
    }

    /** One letter with its body, headers, RabbitMQ's record and the actions taken on it. */
    @GetMapping("/api/letters/one")
    ResponseEntity<Map<String, Object>> letter(@RequestParam String id) {
        Optional<StoredLetter.Full> found = letters.store().get(id);
        if (found.isEmpty()) {
            return refused(HttpStatus.NOT_FOUND, "no letter '" + id + "' is stored (purged letters are dropped after the"
                    + " retention)");
        }
        StoredLetter.Full full = found.get();
        Map<String, Object> answer = letter(full.letter(), sources.clock().instant());
        answer.put("body", full.body().map(ConsoleController::text).orElse(null));
        answer.put("editedBody", full.edited().map(ConsoleController::text).orElse(null));
        answer.put("headers", full.headers());
        answer.put("deaths", full.deaths());
        answer.put("audit", letters.audit().of(id).stream().map(ConsoleController::entry).toList());
        return ResponseEntity.ok(answer);
    }

    /** The actions taken through the console, newest first. */
    @GetMapping("/api/audit")
    Map<String, Object> audit(@RequestParam(defaultValue = "100") int limit) {
        if (limit < 1 || limit > 1000) {
            throw new InvalidInputException("limit must be from 1 to 1000, was " + limit);
        }
        return Map.of("entries", letters.audit().latest(limit).stream().map(ConsoleController::entry).toList());
    }

    /**
     * Replays, parks, un-parks or purges the letters chosen by {@code ids} or by the filter of {@code GET letters}
     * ({@code max} at most): what that filter lists, dead letters unless {@code status} names
     * others (un-park: parked ones).
     */
    @PostMapping("/api/letters/{action}")
    ResponseEntity<Map<String, Object>> act(@PathVariable String action, @RequestParam Map<String, String> parameters,
                                            @RequestParam(defaultValue = "" + LetterActions.MAX_LETTERS) int max,
                                            @RequestHeader(name = ACTION_HEADER, required = false) String header,
                                            HttpServletRequest request) {
        Optional<ResponseEntity<Map<String, Object>>> refusal = refusal(header, request);
        if (refusal.isPresent()) {
            return refusal.get();
        }
        if (!Set.of("replay", "park", "unpark", "purge").contains(action)) {
            return refused(HttpStatus.NOT_FOUND, "unknown action '" + action + "': replay, park, unpark or purge");
        }
        // the filter chooses what GET letters lists for it (dead letters, unless it names a status; un-park: the
        // parked ones): a parked letter is taken only when asked for, never by a filter that did not show it
        LetterQuery query = query(parameters, Optional.of(action.equals("unpark") ? LetterStatus.PARKED
                : LetterStatus.DEAD));
        if (action.equals("purge") && query.ids().isEmpty() && query.kind().isEmpty() && query.entity().isEmpty()
                && query.reason().isEmpty()) {
            return refused(HttpStatus.BAD_REQUEST, "purge drops letters for good: choose them (ids, kind, reason or"
                    + " entity)");
        }
        String user = user(request);
        LetterActions.Outcome outcome = switch (action) {
            case "replay" -> letters.actions().replay(query, max, user);
            case "park" -> letters.actions().park(query, max, user);
            case "unpark" -> letters.actions().unpark(query, max, user);
            default -> letters.actions().purge(query, max, user);
        };
        log.info("console: {} by {} ({})", outcome.result(), user, query.describe());
        return ResponseEntity.ok(outcome(outcome));
    }

    /** Sends one letter back with the body the request carries, once the envelope reader accepts it. */
    @PostMapping(path = "/api/letters/edit-replay")
    ResponseEntity<Map<String, Object>> editAndReplay(@RequestParam String id, @RequestBody byte[] body,
                                                      @RequestHeader(name = ACTION_HEADER, required = false) String header,
                                                      HttpServletRequest request) {
        Optional<ResponseEntity<Map<String, Object>>> refusal = refusal(header, request);
        if (refusal.isPresent()) {
            return refusal.get();
        }
        String user = user(request);
        LetterActions.Outcome outcome = letters.actions().editAndReplay(id, body, user);
        log.info("console: {} by {}", outcome.result(), user);
        return ResponseEntity.ok(outcome(outcome));
    }

    private static Map<String, Object> outcome(LetterActions.Outcome outcome) {
        Map<String, Object> answer = new LinkedHashMap<>();
        answer.put("result", outcome.result());
        answer.put("count", outcome.count());
        answer.put("audit", outcome.audit());
        return answer;
    }

    /** 403 without the console's header or the action role: nothing changes. */
    private Optional<ResponseEntity<Map<String, Object>>> refusal(String header, HttpServletRequest request) {
        if (header == null) {
            return Optional.of(refused(HttpStatus.FORBIDDEN, "an action needs the " + ACTION_HEADER + " header the"
                    + " console's page sends: refused, nothing changed"));
        }
        if (!mayAct(request)) {
            Principal user = request.getUserPrincipal();
            return Optional.of(refused(HttpStatus.FORBIDDEN, (user == null ? "anonymous" : "user '" + user.getName()
                    + "'") + " lacks the role " + properties.actionRole() + " (orderless.console.action-role) that"
                    + " replaying, editing, parking and purging need: refused, nothing changed"));
        }
        return Optional.empty();
    }

    private static String user(HttpServletRequest request) {
        return Optional.ofNullable(request.getUserPrincipal()).map(Principal::getName).orElse("anonymous");
    }

    /** The query the request's parameters say; {@code status} defaults to {@code defaultStatus} (or any). */
    private static LetterQuery query(Map<String, String> parameters, Optional<LetterStatus> defaultStatus) {
        List<String> ids = Optional.ofNullable(parameters.get("ids")).map(text -> java.util.Arrays.stream(
                text.split(",")).map(String::strip).filter(id -> !id.isEmpty()).toList()).orElse(List.of());
        String status = Optional.ofNullable(parameters.get("status")).map(String::strip).orElse("");
        List<LetterStatus> statuses;
        if (status.isEmpty()) {
            statuses = ids.isEmpty() ? defaultStatus.map(List::of).orElse(List.of()) : List.of();
        } else if (status.equals("all")) {
            statuses = List.of();
        } else {
            statuses = List.of(LetterStatus.of(status).orElseThrow(() -> new InvalidInputException("status must be"
                    + " dead, parked, replayed, purged or all, was '" + status + "'")));
        }
        return new LetterQuery(ids, given(parameters, "queue"), given(parameters, "kind"), given(parameters, "reason"),
                given(parameters, "entity"), seconds(parameters, "minAgeSeconds"), seconds(parameters, "maxAgeSeconds"),
                statuses);
    }

    private static Optional<String> given(Map<String, String> parameters, String name) {
        return Optional.ofNullable(parameters.get(name)).filter(value -> !value.isEmpty());
    }

    private static Optional<Duration> seconds(Map<String, String> parameters, String name) {
        return given(parameters, name).map(String::strip).map(text -> {
            try {
                return Duration.ofSeconds(Long.parseLong(text));
            } catch (NumberFormatException e) {
                throw new InvalidInputException("parameter '" + name + "' must be a whole number of seconds, was '"
                        + text + "'");
            }
        });
    }

    private static Map<String, Object> letter(StoredLetter letter, Instant now) {
        Map<String, Object> l = new LinkedHashMap<>();
        l.put("id", letter.id());
        l.put("queue", letter.queue());
        l.put("kind", letter.kind());
        l.put("reason", letter.reason());
        l.put("entity", letter.entity().orElse(null));
        l.put("seq", letter.seq().isPresent() ? letter.seq().getAsLong() : null);
        l.put("deadLettered", letter.deadLettered().toString());
        l.put("timeKnown", letter.timeKnown());
        l.put("ageSeconds", Duration.between(letter.deadLettered(), now).toSeconds());
        l.put("replays", letter.replays());
        l.put("status", letter.status().stored());
        l.put("resolvedAt", letter.resolved().map(Instant::toString).orElse(null));
        l.put("bodyBytes", letter.bodyBytes());
        l.put("heldIn", letter.heldIn().orElse(null));
        return l;
    }

    private static Map<String, Object> entry(AuditLog.Entry entry) {
        Map<String, Object> e = new LinkedHashMap<>();
        e.put("id", entry.id());
        e.put("at", entry.at().toString());
        e.put("user", entry.user());
        e.put("instance", entry.instance());
        e.put("action", entry.action());
        e.put("queue", entry.queue().orElse(null));
        e.put("selection", entry.selection());
        e.put("ids", entry.ids());
        e.put("count", entry.count());
        e.put("outcome", entry.outcome());
        e.put("ok", entry.ok());
        return e;
    }

    /** A body as UTF-8 text, cut where a page would not show more. */
    private static String text(byte[] body) {
        String text = new String(body, java.nio.charset.StandardCharsets.UTF_8);
        return text.length() <= DeadLetterQueue.PEEK_BODY_LIMIT ? text
                : text.substring(0, DeadLetterQueue.PEEK_BODY_LIMIT) + "... (" + body.length + " bytes)";
    }

    /**
     * An entity's live document and, with history on, its versions. The id is a parameter, not a path segment: an
     * entity id may hold any character, '/' and '%' included, which servers and firewalls refuse in a path.
     */
    @GetMapping("/api/entity")
    ResponseEntity<Map<String, Object>> entity(@RequestParam String id) {
        Map<String, Object> entity = new LinkedHashMap<>();
        entity.put("id", id);
        BsonDocument live = sources.entities().find(eq("_id", id)).first();
        Optional<Versions> recorded = sources.history().map(history -> history.versions(id));
        if (live == null && recorded.map(ConsoleController::nothingRecorded).orElse(true)) {
            return noEntity(id);
        }
        entity.put("document", live == null ? null : live.toJson(JSON));
        entity.put("history", sources.history().isPresent());
        recorded.ifPresent(versions -> {
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
        return ResponseEntity.ok(entity);
    }

    /** The history holds nothing of the entity: no version, no folded state, no late operation. */
    private static boolean nothingRecorded(Versions versions) {
        return versions.versions().isEmpty() && versions.horizon() == 0 && versions.late().isEmpty();
    }

    /** An id that names nothing: a 404 the page shows as it is, rather than an empty document. */
    private static ResponseEntity<Map<String, Object>> noEntity(String id) {
        return refused(HttpStatus.NOT_FOUND, "no entity '" + id + "': no live document and no recorded version");
    }

    /** The entity's state as of {@code seq}, or why the history cannot tell. */
    @GetMapping("/api/entity/as-of")
    ResponseEntity<Map<String, Object>> asOf(@RequestParam String id, @RequestParam long seq) {
        if (seq < 0) {   // a seq is never negative: the history would answer "folded", which misleads
            return refused(HttpStatus.BAD_REQUEST, "parameter 'seq' must be 0 or more, was " + seq);
        }
        if (sources.history().isEmpty()) {
            return refused(HttpStatus.NOT_FOUND, "history is off: turn it on (orderless.history.enabled) to read"
                    + " states as of a seq");
        }
        if (sources.entities().find(eq("_id", id)).first() == null
                && nothingRecorded(sources.history().get().versions(id))) {
            return noEntity(id);
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

    private boolean mayAct(HttpServletRequest request) {
        return request.getUserPrincipal() != null && request.isUserInRole(properties.actionRole());
    }

    private static ResponseEntity<Map<String, Object>> refused(HttpStatus status, String error) {
        return ResponseEntity.status(status).body(Map.of("error", error));
    }
}
