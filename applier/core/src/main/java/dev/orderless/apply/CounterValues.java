package dev.orderless.apply;

import dev.orderless.CannotApplyException;
import java.math.BigDecimal;
import java.math.BigInteger;
import java.util.Optional;
import org.bson.BsonDecimal128;
import org.bson.BsonInt64;
import org.bson.BsonValue;
import org.bson.types.Decimal128;

/**
 * A counter's value, exactly: the sum of its increments, whatever its size. A pure decision, with no backend.
 *
 * <p>The rule, the same in every order of delivery: a counter holds the exact sum of the deltas of its increments
 * above the entity's last delete, and it is stored as a 64-bit integer while that sum fits one, as a
 * {@code Decimal128} (exact to 34 digits: more than 10^15 increments of the largest delta) when it does not. So no
 * increment is ever refused or wrapped for the size of the sum, and the stored type depends only on the value.
 */
public final class CounterValues {
    private static final BigInteger LONG_MIN = BigInteger.valueOf(Long.MIN_VALUE);
    private static final BigInteger LONG_MAX = BigInteger.valueOf(Long.MAX_VALUE);
    /** The largest whole number a Decimal128 holds exactly: 34 nines. */
    private static final BigInteger DECIMAL_MAX = BigInteger.TEN.pow(34).subtract(BigInteger.ONE);

    private CounterValues() {
    }

    /**
     * The BSON value a counter holding {@code sum} is stored as.
     *
     * @param sum the exact sum
     * @return a 64-bit integer where the sum fits one, else a {@code Decimal128}
     * @throws CannotApplyException of kind {@code NO_PROGRESS} past 34 digits, which a {@code Decimal128} cannot hold
     *                              exactly (out of reach of any real counter: more than 10^15 increments of the
     *                              largest delta)
     */
    public static BsonValue stored(BigInteger sum) {
        if (sum.compareTo(LONG_MIN) >= 0 && sum.compareTo(LONG_MAX) <= 0) {
            return new BsonInt64(sum.longValue());
        }
        if (sum.abs().compareTo(DECIMAL_MAX) > 0) {
            throw new CannotApplyException(CannotApplyException.Kind.NO_PROGRESS, "no progress: a counter's sum "
                    + sum + " has more than the 34 digits a Decimal128 holds exactly");
        }
        return new BsonDecimal128(new Decimal128(new BigDecimal(sum)));
    }

    /**
     * The whole number a stored counter holds, if it holds one: a 32- or 64-bit integer, or a {@code Decimal128}
     * holding a whole number (as {@link #stored} writes one past a long).
     *
     * @param value the stored value, or {@code null} if absent
     * @return the number; empty if absent or anything else
     */
    public static Optional<BigInteger> read(BsonValue value) {
        if (value == null) {
            return Optional.empty();
        }
        if (value.isInt32() || value.isInt64()) {
            return Optional.of(BigInteger.valueOf(value.asNumber().longValue()));
        }
        if (value.isDecimal128()) {
            Decimal128 d = value.asDecimal128().getValue();
            if (d.isNaN() || d.isInfinite()) {
                return Optional.empty();
            }
            if (d.isNegative() && d.bigDecimalValue().signum() == 0) {
                return Optional.of(BigInteger.ZERO);   // -0, which BigDecimal cannot hold
            }
            try {
                return Optional.of(d.bigDecimalValue().toBigIntegerExact());
            } catch (ArithmeticException e) {
                return Optional.empty();   // a fraction: not a counter orderless wrote
            }
        }
        return Optional.empty();
    }

    /**
     * True if a stored counter holding {@code value} can take an increment of {@code delta} with MongoDB's own
     * {@code $inc}: it is absent or a 32- or 64-bit integer, and the sum stays a long (MongoDB refuses an {@code $inc}
     * past a long; a {@code Decimal128} is incremented exactly, and typed back, by a compare-and-set).
     *
     * @param value the stored value, or {@code null} if absent
     * @param delta the increment
     * @return whether the blind {@code $inc} gives {@link #stored} of the exact sum
     */
    static boolean incrementable(BsonValue value, long delta) {
        if (value == null) {
            return true;
        }
        if (!value.isInt32() && !value.isInt64()) {
            return false;
        }
        long current = value.asNumber().longValue();
        return delta >= 0 ? current <= Long.MAX_VALUE - delta : current >= Long.MIN_VALUE - delta;
    }
}
