package dev.orderless.demo;

import java.time.Duration;
import java.time.format.DateTimeParseException;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import picocli.CommandLine;

/** A duration on the command line as people write it: {@code 7d}, {@code 12h}, {@code 30m}, {@code 45s}, or ISO-8601. */
final class Durations implements CommandLine.ITypeConverter<Duration> {
    private static final Pattern SHORT = Pattern.compile("(\\d+)\\s*(d|h|m|s|ms)");

    @Override
    public Duration convert(String value) {
        String text = value.strip().toLowerCase(java.util.Locale.ROOT);
        Matcher m = SHORT.matcher(text);
        if (m.matches()) {
            long n = Long.parseLong(m.group(1));
            return switch (m.group(2)) {
                case "d" -> Duration.ofDays(n);
                case "h" -> Duration.ofHours(n);
                case "m" -> Duration.ofMinutes(n);
                case "s" -> Duration.ofSeconds(n);
                default -> Duration.ofMillis(n);
            };
        }
        try {
            return Duration.parse(value.strip().toUpperCase(java.util.Locale.ROOT));
        } catch (DateTimeParseException e) {
            throw new CommandLine.TypeConversionException("'" + value + "' is not a duration: write 7d, 12h, 30m, 45s,"
                    + " or ISO-8601 such as P1DT12H");
        }
    }
}
