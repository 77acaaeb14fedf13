package dev.orderless.backends;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.mongodb.client.MongoClient;
import dev.orderless.testing.MongoExtension;
import java.util.Optional;
import org.bson.Document;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/** The MongoDB chosen for this run answers, and a bad choice says what to change. */
@ExtendWith(MongoExtension.class)
class BackendsTest {

    @Test
    void the_chosen_mongodb_answers_a_ping(MongoClient client, MongoBackend backend) {
        Document pong = client.getDatabase("admin").runCommand(new Document("ping", 1));

        assertThat(pong.get("ok", Number.class).doubleValue()).as(backend.description()).isEqualTo(1.0);
    }

    @Test
    void an_unknown_backend_mode_fails_naming_the_setting() {
        assertThatThrownBy(() -> Backends.mode(Optional.of("docker")))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("orderless.backends must be 'embedded' or 'testcontainers', was 'docker'");
        assertThat(Backends.mode(Optional.empty())).isEqualTo(Backends.Mode.EMBEDDED);
        assertThat(Backends.mode(Optional.of(" testcontainers "))).isEqualTo(Backends.Mode.TESTCONTAINERS);
    }

    @Test
    void a_malformed_uri_fails_with_an_example_of_a_good_one() {
        assertThatThrownBy(() -> Backends.mongo(Optional.of("localhost:27017")))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("expected e.g. mongodb://localhost:27017/?replicaSet=rs0");
    }

    @Test
    void fresh_database_names_are_unique_and_within_mongodb_limits() {
        String a = MongoBackend.freshDatabaseName("Some.Test$Class-With-A-Very-Long-Name-Indeed-Yes");
        String b = MongoBackend.freshDatabaseName("Some.Test$Class-With-A-Very-Long-Name-Indeed-Yes");

        assertThat(a).isNotEqualTo(b).matches("[A-Za-z0-9_]+").hasSizeLessThanOrEqualTo(63);
    }
}
