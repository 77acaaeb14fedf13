package dev.orderless.testing.chaos;

import static org.assertj.core.api.Assertions.assertThat;

import dev.orderless.apply.Operation;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Random;
import java.util.function.Predicate;
import org.bson.BsonString;
import org.junit.jupiter.api.Test;

class MinimizerTest {
    private static Operation coupon(long seq) {
        return Operation.assign("o1", seq, "coupon", new BsonString("C" + seq));
    }

    private static Operation line(long seq) {
        return Operation.add("o1", seq, "lines", "sku-" + seq);
    }

    /** A plain $set of the coupon: it breaks once a coupon arrives after a coupon with a higher seq. */
    private static final Predicate<List<Operation>> OLDER_COUPON_LAST = delivery -> {
        long highest = 0;
        for (Operation op : delivery) {
            if (op instanceof Operation.Assign) {
                if (op.seq() < highest) {
                    return true;
                }
                highest = Math.max(highest, op.seq());
            }
        }
        return false;
    };

    @Test
    void a_break_that_needs_two_coupons_out_of_order_shrinks_to_those_two_and_nothing_else() {
        List<Operation> delivery = new ArrayList<>();
        for (long seq = 1; seq <= 40; seq++) {
            delivery.add(seq % 5 == 0 ? coupon(seq) : line(seq));
        }
        Collections.shuffle(delivery, new Random(7));
        assertThat(OLDER_COUPON_LAST.test(delivery)).isTrue();

        Minimizer minimizer = new Minimizer(OLDER_COUPON_LAST, 200);
        List<Operation> smallest = minimizer.minimize(delivery);

        assertThat(smallest).hasSize(2).allMatch(op -> op instanceof Operation.Assign);
        assertThat(smallest.get(0).seq()).isGreaterThan(smallest.get(1).seq());
        assertThat(minimizer.trials()).isLessThanOrEqualTo(200);
    }

    @Test
    void what_a_break_does_not_need_out_of_order_is_put_back_toward_seq_order() {
        // breaks whenever coupon 5 comes before line 1 (all three needed): line 3 may go anywhere
        Predicate<List<Operation>> breaks = d -> d.size() == 3 && d.indexOf(coupon(5)) < d.indexOf(line(1));
        Minimizer minimizer = new Minimizer(breaks, 200);

        List<Operation> smallest = minimizer.minimize(List.of(coupon(5), line(3), line(1)));

        assertThat(breaks.test(smallest)).isTrue();
        assertThat(inversions(smallest)).as("%s: from 3 pairs out of seq order to the 2 the break needs", smallest)
                .isEqualTo(2);
    }

    private static int inversions(List<Operation> delivery) {
        int count = 0;
        for (int i = 0; i < delivery.size(); i++) {
            for (int j = i + 1; j < delivery.size(); j++) {
                count += delivery.get(i).seq() > delivery.get(j).seq() ? 1 : 0;
            }
        }
        return count;
    }

    @Test
    void it_stops_at_its_bound_with_the_smallest_found_so_far() {
        List<Operation> delivery = new ArrayList<>();
        for (long seq = 1; seq <= 40; seq++) {
            delivery.add(line(seq));
        }
        Minimizer minimizer = new Minimizer(d -> d.size() > 10, 5);

        List<Operation> smallest = minimizer.minimize(delivery);

        assertThat(minimizer.trials()).isEqualTo(5);
        assertThat(smallest.size()).isLessThan(40).isGreaterThan(10);
    }
}
