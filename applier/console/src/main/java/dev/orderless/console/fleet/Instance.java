package dev.orderless.console.fleet;

import dev.orderless.InvalidConfigurationException;
import java.net.InetAddress;
import java.security.SecureRandom;
import java.time.Instant;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;

/**
 * One instance of the application, as the fleet knows it: an id that stays the same while it runs and is never
 * another instance's ({@code host:pid:random}, the random part telling apart two instances in one process or a pid
 * reused after a restart), where it runs, and since when.
 *
 * @param id          {@code host:pid:<6 hex digits>}
 * @param host        the host name it runs on, as the machine names itself
 * @param pid         its process id
 * @param application {@code spring.application.name}, if set
 * @param started     when it began reporting
 */
public record Instance(String id, String host, long pid, Optional<String> application, Instant started) {
    private static final SecureRandom RANDOM = new SecureRandom();

    /** Refuses a missing part. */
    public Instance {
        if (id == null || id.isBlank() || host == null || application == null || started == null) {
            throw InvalidConfigurationException.refused("fleet instance", "every part", "must be given");
        }
    }

    /**
     * This process, with a fresh random part: call it once per instance and keep it.
     *
     * @param application the application's name, if it has one
     * @param started     when it starts reporting
     * @return the instance
     */
    public static Instance ofThisProcess(Optional<String> application, Instant started) {
        String host = hostName();
        long pid = ProcessHandle.current().pid();
        byte[] random = new byte[3];
        RANDOM.nextBytes(random);
        return new Instance(host + ":" + pid + ":" + HexFormat.of().formatHex(random), host, pid,
                application.map(String::strip).filter(name -> !name.isEmpty()), started);
    }

    private static String hostName() {
        try {
            return InetAddress.getLocalHost().getHostName();
        } catch (java.io.IOException | RuntimeException e) {   // a host without a resolvable name still reports
            return Optional.ofNullable(System.getenv("HOSTNAME")).filter(h -> !h.isBlank()).orElse("unknown-host");
        }
    }

    /** @return {@code {id, host, pid, application?, started}} as the overview's {@code instance} */
    public Map<String, Object> describe() {
        Map<String, Object> instance = new LinkedHashMap<>();
        instance.put("id", id);
        instance.put("host", host);
        instance.put("pid", pid);
        application.ifPresent(name -> instance.put("application", name));
        instance.put("started", started.toString());
        return instance;
    }
}
