package dev.orderless.boot;

import dev.orderless.OrderlessException;
import dev.orderless.view.ViewFeeder;
import java.util.LinkedHashMap;
import java.util.Map;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.HealthIndicator;

/**
 * {@code DOWN} if a view's feeder is {@code FAILED} (with why) or not running; {@code UP} while each is
 * {@code ACTIVE} or {@code STANDBY} (another instance feeds that view: healthy). Details per view: its
 * state; while active, its lease's fence and its lag (ISO-8601, as {@code PT0.4S}: see
 * {@link ViewFeeder#lag()}); the failure if any.
 */
final class OrderlessFeedersHealth implements HealthIndicator {
    private final OrderlessFeeders feeders;

    OrderlessFeedersHealth(OrderlessFeeders feeders) {
        this.feeders = feeders;
    }

    @Override
    public Health health() {
        Map<String, ViewFeeder> running = feeders.feeders();
        boolean up = true;
        Map<String, Object> views = new LinkedHashMap<>();
        for (OrderlessView view : feeders.views()) {
            ViewFeeder feeder = running.get(view.name());
            Map<String, Object> detail = new LinkedHashMap<>();
            if (feeder == null) {
                detail.put("state", "NOT_RUNNING");
                up = false;
            } else {
                detail.put("state", feeder.state().name());
                if (feeder.options().segments() > 1) {   // each segment fed here, with its lease's fence
                    Map<String, Long> segments = new LinkedHashMap<>();
                    feeder.fences().forEach((segment, fence) -> segments.put(segment.toString(), fence));
                    detail.put("segments", segments);
                } else {
                    feeder.fence().ifPresent(fence -> detail.put("fence", fence));
                }
                feeder.lag().ifPresent(lag -> detail.put("lag", lag.toString()));
                feeder.failure().map(OrderlessException::getMessage).ifPresent(why -> detail.put("failure", why));
                up &= feeder.state() == ViewFeeder.State.ACTIVE || feeder.state() == ViewFeeder.State.STANDBY;
            }
            views.put(view.name(), detail);
        }
        return (up ? Health.up() : Health.down()).withDetails(views).build();
    }
}
