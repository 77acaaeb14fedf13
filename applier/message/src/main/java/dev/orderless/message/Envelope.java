package dev.orderless.message;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.orderless.InvalidInputException;
import dev.orderless.apply.Operation;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.bson.BsonDocument;
import org.bson.BsonValue;

/**
 * The canonical JSON envelope (UTF-8, {@code content_type: application/json}), versions 1 and {@value #VERSION}, one
 * operation per message:
 *
 * <pre>
 * {"entity":"student-17","seq":1042,"op":"add","field":"classes","element":"CS 101","attrs":{"title":"Intro"}}
 * {"entity":"student-17","seq":1043,"op":"remove","field":"classes","element":"CS 101"}
 * {"entity":"student-17","seq":1044,"op":"assign","field":"name","value":"Ada"}
 * {"entity":"student-17","seq":1045,"op":"delete","meta":{"trace":"4bf92f35"}}
 * {"v":2,"entity":"student-17","seq":1046,"op":"increment","field":"credits","delta":4}
 * {"v":3,"entity":"order-9","seq":3,"op":"assign","field":"placedAt","value":{"$date":"2026-11-29T10:15:00Z"}}
 * </pre>
 *
 * Values ({@code value}, {@code attrs}) are MongoDB Extended JSON ({@code ExtendedJson}): each is stored with the
 * BSON type it was sent with, a 64-bit integer, a decimal, a date, an ObjectId or binary data included; plain JSON
 * reads as before (a whole number as an Int32 where it fits, else an Int64; a number with a point as a Double).
 *
 * Its rules, so that producers can evolve before their consumers (docs/guide/wiring.md says them for producers):
 * <ol>
 *   <li>The members of an operation ({@code entity}, {@code seq}, {@code op}, and {@code field}, {@code element},
 *       {@code attrs}, {@code value}, {@code delta} as its op needs) are checked strictly: one missing or mistyped, a seq that is
 *       not a positive whole number, an unknown op, is bad input, refused by name, so a producer bug shows in the
 *       dead-letter queue instead of becoming a wrong write. A misspelt member reads as missing and is refused
 *       by the name it lacks; an add without {@code attrs} that carries a member spelt like it ({@code atrs},
 *       {@code Attrs}, {@code attributes}) is refused too, since {@code attrs} is optional and its attributes would
 *       otherwise be lost in silence.
 *   <li>{@value #META} is the producers' own: any JSON (a trace id, a priority), carried and never read.
 *   <li>{@value #VERSION_MEMBER}, if present, names the envelope version, a positive whole number (anything else is
 *       bad input); absent means 1. A version this consumer does not read is refused as {@link UnsupportedEnvelopeException} (replayable once it does).
 *   <li>Any other member is ignored by default ({@link UnknownMembers#IGNORE}): counted in
 *       {@code orderless.envelope.ignored_members} (with {@link #withMeters}), tagged {@code member} with its name
 *       (the first {@value #NAMES_TAGGED} names; {@value #OTHER_MEMBERS} after them, so that a producer cannot make
 *       meters without end), and logged once per name at WARN, so a
 *       producer that adds one does not dead-letter everything it sends. {@link UnknownMembers#REFUSE} (a strict
 *       consumer) refuses it as {@link UnsupportedEnvelopeException}, once the operation's own members were read
 *       (a misspelt one is bad input first: no upgrade of the consumer would make it replayable).
 * </ol>
 * Every refusal names the entity and seq where the message holds them readably. Field names are checked against
 * the schema later, by the applier. Immutable and thread-safe: {@link #withUnknownMembers} and {@link #withMeters}
 * return copies.
 */
public final class Envelope implements OperationDecoder {
    private static final Logger log = LoggerFactory.getLogger(Envelope.class);

    /** The content type the envelope is sent with. */
    public static final String CONTENT_TYPE = "application/json";
    /**
     * The largest message, in bytes, that consumers accept and an outbox records unless set otherwise:
     * 256 KiB, far above any one operation, small enough that one message never holds a consumer up.
     */
    public static final int DEFAULT_MAX_BYTES = 256 * 1024;
    /**
     * The newest version of the envelope this class reads: 3. Version 2 added {@code increment}; version 3, values
     * with their BSON types in Extended JSON wrappers ({@code {"$numberLong": "5"}}, {@code {"$date": ...}}), and
     * a seq or delta given as {@code {"$numberLong": "..."}} (for producers whose numbers are doubles). It reads
     * every version, and writes the lowest one that says the operation: 3 only for a value that plain JSON cannot
     * type, 2 only for an increment, else 1; so a consumer that reads only an older version refuses what it cannot
     * read replayably ({@code unsupported_envelope}) and reads every other message as before.
     */
    public static final int VERSION = 3;
    /** The member for the producers' own metadata: any JSON, carried and never read. */
    public static final String META = "meta";
    /** The optional member naming the envelope's version; absent means 1. */
    public static final String VERSION_MEMBER = "v";

    /** What a consumer does with a top-level member that this version of the envelope does not define. */
    public enum UnknownMembers {
        /** Ignored, counted and logged once per name: producers may add members before consumers read them. */
        IGNORE,
        /** Refused as an {@link UnsupportedEnvelopeException}: a strict consumer. */
        REFUSE
    }

    /** The members of an operation, in the order a refusal lists them. */
    private static final List<String> MEMBERS = List.of("entity", "seq", "op", "field", "element", "attrs", "value",
            "delta");
    private static final Set<String> DEFINED = Set.of("entity", "seq", "op", "field", "element", "attrs", "value",
            "delta", META, VERSION_MEMBER);
    /** Jackson's words for a member given twice. */
    private static final Pattern DUPLICATE = Pattern.compile("Duplicate field '(.*?)'");
    /** Names logged at most once each, and at most this many: a producer cannot fill the log with names. */
    private static final int NAMES_LOGGED = 32;
    /** Names given a meter tag of their own, at most: a producer cannot make meters without end. */
    static final int NAMES_TAGGED = 32;
    /** The {@code member} tag of an ignored member counted after the first {@link #NAMES_TAGGED} names. */
    static final String OTHER_MEMBERS = "(other)";
    private static final String IGNORED_METER = "orderless.envelope.ignored_members";

    private final ObjectMapper json = new ObjectMapper()
            .enable(DeserializationFeature.FAIL_ON_TRAILING_TOKENS)
            .enable(DeserializationFeature.FAIL_ON_READING_DUP_TREE_KEY);
    private final ObjectMapper lenient = new ObjectMapper();
    private final UnknownMembers unknownMembers;
    private final Optional<MeterRegistry> meters;
    private final Set<String> logged = ConcurrentHashMap.newKeySet();
    private final Set<String> tagged = ConcurrentHashMap.newKeySet();

    /** The envelope with its defaults: unknown members ignored, counted nowhere. */
    public Envelope() {
        this(UnknownMembers.IGNORE, Optional.empty());
    }

    private Envelope(UnknownMembers unknownMembers, Optional<MeterRegistry> meters) {
        if (unknownMembers == null) {
            throw new IllegalArgumentException("envelope: unknownMembers must be IGNORE or REFUSE, was null");
        }
        this.unknownMembers = unknownMembers;
        this.meters = meters;
    }

    /** The envelope with its defaults: unknown members ignored. */
    public static Envelope ofDefaults() {
        return new Envelope();
    }

    /** This envelope, doing {@code policy} with a member its version does not define. */
    public Envelope withUnknownMembers(UnknownMembers policy) {
        return new Envelope(policy, meters);
    }

    /** This envelope, counting the members it ignores in {@code orderless.envelope.ignored_members} of {@code meters}. */
    public Envelope withMeters(MeterRegistry meters) {
        if (meters == null) {
            throw new IllegalArgumentException("envelope: meters must not be null");
        }
        return new Envelope(unknownMembers, Optional.of(meters));
    }

    /** What it does with members it does not know. */
    public UnknownMembers unknownMembers() {
        return unknownMembers;
    }

    @Override
    public Operation decode(byte[] body) {
        JsonNode root;
        try {
            root = json.readTree(body);
        } catch (IOException e) {
            // the subject as far as it reads unambiguously: a member given twice names neither of its values
            Optional<String> twice = duplicated(e);
            throw new InvalidInputException(notJson(e) + readable(body).map(node -> {
                twice.ifPresent(((ObjectNode) node)::remove);
                return about(node);
            }).orElse(""));
        }
        if (root == null || !root.isObject()) {
            throw new InvalidInputException("not a JSON object");
        }
        String about = about(root);
        try {
            version(root);
            List<String> unknown = unknownMembers(root);
            Operation op = operation(root, unknown);
            unknownMembersPolicy(unknown);
            return op;
        } catch (UnsupportedEnvelopeException e) {
            throw new UnsupportedEnvelopeException(naming(e.getMessage(), about));
        } catch (InvalidInputException e) {
            throw new InvalidInputException(naming(e.getMessage(), about));
        }
    }

    /** {@code reason} with the subject at its end, once: the operation's own checks may have put it there already. */
    private static String naming(String reason, String about) {
        return reason.endsWith(about) ? reason : reason + about;
    }

    /** Why a body is not JSON the envelope reads, in its own words where Jackson's would mislead. */
    private static String notJson(IOException e) {
        String message = e.getMessage() == null ? "" : e.getMessage();
        Optional<String> twice = duplicated(e);
        if (twice.isPresent()) {
            return "member '" + clip(twice.get()) + "' appears twice";
        }
        if (message.startsWith("Trailing token")) {
            return "not JSON: more follows the object";
        }
        return "not JSON: " + firstLine(message);
    }

    /** The member Jackson refused for appearing twice, if that is why it refused. */
    private static Optional<String> duplicated(IOException e) {
        Matcher duplicate = DUPLICATE.matcher(e.getMessage() == null ? "" : e.getMessage());
        return duplicate.find() ? Optional.of(duplicate.group(1)) : Optional.empty();
    }

    /** The body read leniently (duplicates and trailing content allowed), to name its subject in a refusal. */
    private Optional<JsonNode> readable(byte[] body) {
        try {
            JsonNode node = lenient.readTree(body);
            return node != null && node.isObject() ? Optional.of(node) : Optional.empty();
        } catch (IOException | RuntimeException e) {
            return Optional.empty();
        }
    }

    /** {@code " (entity 'e', seq 7)"}, or as much of it as the message holds readably. */
    private static String about(JsonNode root) {
        JsonNode entity = root.get("entity");
        JsonNode seq = root.get("seq");
        List<String> parts = new ArrayList<>();
        if (entity != null && entity.isTextual()) {
            parts.add("entity '" + clip(entity.asText()) + "'");
        }
        if (seq != null) {
            wholeNumber(seq).ifPresent(number -> parts.add("seq " + number));
        }
        return parts.isEmpty() ? "" : " (" + String.join(", ", parts) + ")";
    }

    private static void version(JsonNode root) {
        JsonNode version = root.get(VERSION_MEMBER);
        if (version == null) {
            return;
        }
        if (!version.isIntegralNumber() || (version.canConvertToLong() && version.longValue() < 1)) {
            throw new InvalidInputException("'" + VERSION_MEMBER + "' (the envelope version) must be a positive whole"
                    + " number, was " + clip(version.toString()));
        }
        if (!version.canConvertToInt() || version.intValue() > VERSION) {
            throw new UnsupportedEnvelopeException("envelope version " + clip(version.toString())
                    + " is not one this consumer reads (it reads 1 to " + VERSION + "): upgrade it, then replay");
        }
    }

    /** The members the version does not define. */
    private static List<String> unknownMembers(JsonNode root) {
        List<String> unknown = new ArrayList<>();
        for (var name : (Iterable<String>) root::fieldNames) {
            if (!DEFINED.contains(name)) {
                unknown.add(name);
            }
        }
        return unknown;
    }

    /**
     * What this consumer does with the members the version does not define, once the operation itself was read
     * (so that a misspelt member of the operation is refused as bad input first, by the name it lacks): refused,
     * or ignored, counted and logged once per name.
     */
    private void unknownMembersPolicy(List<String> unknown) {
        if (unknown.isEmpty()) {
            return;
        }
        if (unknownMembers == UnknownMembers.REFUSE) {
            throw new UnsupportedEnvelopeException("unknown member '" + clip(unknown.get(0)) + "' (envelope "
                    + VERSION + " has " + String.join(", ", MEMBERS) + ", " + META + " and " + VERSION_MEMBER
                    + "; this consumer refuses others)");
        }
        meters.ifPresent(registry -> unknown.forEach(name -> ignoredMeter(registry, name).increment()));
        for (String name : unknown) {
            if (logged.size() < NAMES_LOGGED && logged.add(name)) {
                log.warn("a message carries the member '{}', which envelope {} does not define: ignored (this is"
                        + " said once per name; a producer's own metadata belongs under '{}')", clip(name), VERSION, META);
            }
        }
    }

    /** The counter of ignored members named {@code name}: tagged with it, or with {@link #OTHER_MEMBERS} past the cap. */
    private Counter ignoredMeter(MeterRegistry registry, String name) {
        String member = clip(name);
        boolean own = tagged.contains(member) || (tagged.size() < NAMES_TAGGED && tagged.add(member));
        return Counter.builder(IGNORED_METER)
                .description("members of incoming messages that the envelope does not define, ignored, by name")
                .tag("member", own ? member : OTHER_MEMBERS)
                .register(registry);
    }

    private static Operation operation(JsonNode root, List<String> unknown) {
        String entity = text(root, "entity", unknown);
        long seq = seq(root, unknown);
        String op = text(root, "op", unknown);
        switch (op) {
            case "add":
                return Operation.add(entity, seq, text(root, "field", unknown), text(root, "element", unknown),
                        attrs(root, unknown));
            case "remove":
                return Operation.remove(entity, seq, text(root, "field", unknown), text(root, "element", unknown));
            case "assign":
                if (!root.has("value")) {
                    throw new InvalidInputException("assign without 'value'" + besides(unknown));
                }
                String field = text(root, "field", unknown);
                return Operation.assign(entity, seq, field, ExtendedJson.read(root.get("value"),
                        "the value of '" + clip(field) + "'"));
            case "increment":
                return Operation.increment(entity, seq, text(root, "field", unknown), delta(root, unknown));
            case "delete":
                return Operation.delete(entity, seq);
            default:
                throw new InvalidInputException("unknown op '" + clip(op) + "' (expected add, remove, assign, increment"
                        + " or delete)");
        }
    }

    /**
     * The canonical JSON of {@code op}, as UTF-8 bytes, in the lowest version that says it (see {@link #VERSION}).
     *
     * @param op the operation
     * @return its envelope
     * @throws InvalidInputException if a value or attribute holds a BSON type the envelope does not carry (a
     *                               timestamp, code, a pattern...), naming the type, the field and the operation
     */
    public byte[] encode(Operation op) {
        ObjectNode body = json.createObjectNode();
        int version = 1;
        if (op instanceof Operation.Add add) {
            body.put("op", "add").put("field", add.field()).put("element", add.element());
            if (!add.attrs().isEmpty()) {
                body.set("attrs", written(add.attrs(), "the attributes of '" + clip(add.element()) + "' in '"
                        + clip(add.field()) + "'", op));
                version = ExtendedJson.needsTypes(add.attrs()) ? 3 : version;
            }
        } else if (op instanceof Operation.Remove remove) {
            body.put("op", "remove").put("field", remove.field()).put("element", remove.element());
        } else if (op instanceof Operation.Assign assign) {
            body.put("op", "assign").put("field", assign.field()).set("value", written(assign.value(),
                    "the value of '" + clip(assign.field()) + "'", op));
            version = ExtendedJson.needsTypes(assign.value()) ? 3 : version;
        } else if (op instanceof Operation.Increment increment) {
            body.put("op", "increment").put("field", increment.field()).put("delta", increment.delta());
            version = 2;
        } else {
            body.put("op", "delete");
        }
        // the version first: a consumer that reads only an older one refuses the message replayably
        ObjectNode root = json.createObjectNode();
        if (version > 1) {
            root.put(VERSION_MEMBER, version);
        }
        root.put("entity", op.entity());
        root.put("seq", op.seq());
        root.setAll(body);
        try {
            return json.writeValueAsBytes(root);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException("cannot write JSON for " + op, e);
        }
    }

    /**
     * {@code value} as Extended JSON, read into a tree so that the envelope is written compactly; refused with the
     * operation named at the end, as a consumer names it.
     */
    private JsonNode written(BsonValue value, String what, Operation op) {
        String text;
        try {
            text = ExtendedJson.write(value, what);
        } catch (InvalidInputException e) {
            throw new InvalidInputException(e.getMessage() + " (entity '" + clip(op.entity()) + "', seq " + op.seq()
                    + ")");
        }
        try {
            return json.readTree(text);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException("the driver wrote Extended JSON that is not JSON: " + clip(text), e);
        }
    }

    /** A readable one-line form of a body, for logs and tests. */
    public static String toString(byte[] body) {
        return new String(body, StandardCharsets.UTF_8);
    }

    private static String text(JsonNode root, String member, List<String> unknown) {
        JsonNode node = root.get(member);
        if (node == null || node.isNull()) {
            throw new InvalidInputException("missing '" + member + "'" + besides(unknown));
        }
        if (!node.isTextual()) {
            throw new InvalidInputException("'" + member + "' must be a string");
        }
        return node.asText();
    }

    private static long seq(JsonNode root, List<String> unknown) {
        JsonNode node = root.get("seq");
        if (node == null || node.isNull()) {
            throw new InvalidInputException("missing 'seq'" + besides(unknown));
        }
        long seq = wholeNumber(node).orElseThrow(() -> new InvalidInputException("'seq' must be a whole number, was "
                + clip(node.toString())));
        if (seq <= 0) {
            throw new InvalidInputException("'seq' must be positive, was " + seq);
        }
        return seq;
    }

    private static long delta(JsonNode root, List<String> unknown) {
        JsonNode node = root.get("delta");
        if (node == null || node.isNull()) {
            throw new InvalidInputException("increment without 'delta'" + besides(unknown));
        }
        return wholeNumber(node).orElseThrow(() -> new InvalidInputException("'delta' must be a whole number (a 64-bit"
                + " one), was " + clip(node.toString())));
    }

    /**
     * A 64-bit whole number: a plain JSON one, or (version 3) its Extended JSON form {@code {"$numberLong": "..."}}
     * or {@code {"$numberInt": "..."}}, which a producer whose numbers are doubles (JavaScript) writes for a seq past
     * 2^53.
     */
    private static Optional<Long> wholeNumber(JsonNode node) {
        if (node.isIntegralNumber()) {
            return node.canConvertToLong() ? Optional.of(node.longValue()) : Optional.empty();
        }
        if (node.isObject() && node.size() == 1) {
            JsonNode digits = node.has("$numberLong") ? node.get("$numberLong") : node.get("$numberInt");
            if (digits != null && digits.isTextual()) {
                try {
                    long value = Long.parseLong(digits.asText());
                    return node.has("$numberInt") && value != (int) value ? Optional.empty() : Optional.of(value);
                } catch (NumberFormatException e) {
                    return Optional.empty();
                }
            }
        }
        return Optional.empty();
    }

    /** A misspelt member reads as missing: name the members the message has that the envelope does not define. */
    private static String besides(List<String> unknown) {
        return unknown.isEmpty() ? "" : " (it has " + unknown.stream().limit(3).map(name -> "'" + clip(name) + "'")
                .collect(java.util.stream.Collectors.joining(", ")) + ", which envelope " + VERSION + " does not define)";
    }

    /**
     * An add's attributes. {@code attrs} is optional, so a misspelt one would read as absent and its attributes
     * be lost in silence: an add without {@code attrs} that carries a member spelt like it is refused instead.
     */
    private static BsonDocument attrs(JsonNode root, List<String> unknown) {
        JsonNode node = root.get("attrs");
        if (node == null || node.isNull()) {
            for (String name : unknown) {
                if (spelledLikeAttrs(name)) {
                    throw new InvalidInputException("unknown member '" + clip(name) + "' beside an add without"
                            + " 'attrs': a misspelt 'attrs'? (refused, so that its attributes are not lost)");
                }
            }
            return new BsonDocument();
        }
        if (!node.isObject()) {
            throw new InvalidInputException("'attrs' must be an object");
        }
        BsonValue attrs = ExtendedJson.read(node, "'attrs'");
        if (!attrs.isDocument()) {
            throw new InvalidInputException("'attrs' must be an object of attributes, was a BSON "
                    + attrs.getBsonType().name().toLowerCase(java.util.Locale.ROOT).replace('_', ' '));
        }
        return attrs.asDocument();
    }

    /** {@code Attrs}, {@code atrs}, {@code attributes}, {@code attr}: one that most likely meant {@code attrs}. */
    static boolean spelledLikeAttrs(String name) {
        String lower = name.toLowerCase(java.util.Locale.ROOT);
        return lower.startsWith("attr") || lower.startsWith("atr") || editDistance(lower, "attrs") <= 2;
    }

    private static int editDistance(String a, String b) {
        int[] previous = new int[b.length() + 1];
        int[] current = new int[b.length() + 1];
        for (int j = 0; j <= b.length(); j++) {
            previous[j] = j;
        }
        for (int i = 1; i <= a.length(); i++) {
            current[0] = i;
            for (int j = 1; j <= b.length(); j++) {
                int substitution = previous[j - 1] + (a.charAt(i - 1) == b.charAt(j - 1) ? 0 : 1);
                current[j] = Math.min(substitution, Math.min(previous[j] + 1, current[j - 1] + 1));
            }
            int[] swap = previous;
            previous = current;
            current = swap;
        }
        return previous[b.length()];
    }

    static String clip(String s) {
        return s.length() <= 60 ? s : s.substring(0, 57) + "...";
    }

    private static String firstLine(String message) {
        String line = message == null ? "" : message.lines().findFirst().orElse("");
        return clip(line);
    }
}
