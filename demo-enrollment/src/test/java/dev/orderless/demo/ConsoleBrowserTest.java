package dev.orderless.demo;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.orderless.backends.MongoBackend;
import dev.orderless.backends.rabbit.RabbitBackend;
import dev.orderless.testing.MongoExtension;
import dev.orderless.testing.rabbit.ConfirmedPublisher;
import dev.orderless.testing.rabbit.RabbitExtension;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.awaitility.Awaitility;
import org.bson.BsonDocument;
import org.bson.BsonString;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.extension.ExtendWith;
import org.openqa.selenium.By;
import org.openqa.selenium.JavascriptExecutor;
import org.openqa.selenium.NoAlertPresentException;
import org.openqa.selenium.OutputType;
import org.openqa.selenium.TakesScreenshot;
import org.openqa.selenium.WebDriver;
import org.openqa.selenium.WebElement;
import org.openqa.selenium.chrome.ChromeDriver;
import org.openqa.selenium.chrome.ChromeDriverService;
import org.openqa.selenium.chrome.ChromeOptions;
import org.springframework.amqp.rabbit.connection.ConnectionFactory;
import org.springframework.context.ConfigurableApplicationContext;

/**
 * The operator console in a real browser (headless Chromium, driven by Selenium) against the demo's console
 * application ({@code serve --console}'s): its consumers and rosters feeder on the test's broker and MongoDB. An
 * operator sees them running, sees poison grouped by reason, fixes a broken document and replays its letter, and
 * reads the student's versions; a viewer can look but not act; markup in an id or a reason is shown as text.
 * Screenshots of each page go to {@code target/console-screenshots} (the ones in docs/operations.md come from
 * there, copied by hand).
 *
 * <p>Without Chromium and ChromeDriver ({@code apt-get install chromium chromium-driver}; {@code .ci/run} installs
 * them) the class is skipped, except in CI, where it fails: a skipped browser test must not pass for a green run.
 */
@Tag("browser")
@ExtendWith({MongoExtension.class, RabbitExtension.class})
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class ConsoleBrowserTest {
    private static final Path CHROMIUM = Path.of("/usr/bin/chromium");
    private static final Path CHROMEDRIVER = Path.of("/usr/bin/chromedriver");
    private static final Path SCREENSHOTS = Path.of("target", "console-screenshots");
    private static final String MARKUP = "<img src=x onerror=alert(1)>";
    private static final DemoBoot.ConsoleUsers USERS = new DemoBoot.ConsoleUsers("operator-pw", "viewer-pw");
    private static final Duration WAIT = Duration.ofSeconds(30);
    private static final int BULK = 10_000;

    private static Wiring wiring;
    private static ConfigurableApplicationContext app;
    private static WebDriver browser;
    private static String console;
    private static ConnectionFactory publishing;
    private static String queue;

    @BeforeAll
    static void consoleAndBrowser(MongoBackend mongo, RabbitBackend rabbit, ConnectionFactory confirming) {
        boolean installed = Files.isExecutable(CHROMIUM) && Files.isExecutable(CHROMEDRIVER);
        if (!installed && "true".equals(System.getenv("CI"))) {
            throw new IllegalStateException("CI runs the browser tests: " + CHROMIUM + " or " + CHROMEDRIVER + " is"
                    + " missing (apt-get install -y chromium chromium-driver; .ci/run does)");
        }
        assumeTrue(installed, "no Chromium and ChromeDriver here (apt-get install -y chromium chromium-driver)");
        publishing = confirming;
        queue = RabbitExtension.uniqueQueue("console");
        DemoOptions options = DemoOptions.ofDefaults("serve").withHistory(true).withConsumers(2, 0)
                .withBackends(Optional.of(mongo.connectionString()), Optional.of(rabbit.uri().toString()))
                .withPlace(MongoBackend.freshDatabaseName("console"), queue);
        wiring = Wiring.connect(options);
        app = DemoBoot.console(wiring, new SimpleMeterRegistry(), 0, USERS);
        console = DemoBoot.consoleUrl(app);
        ChromeOptions chrome = new ChromeOptions().setBinary(CHROMIUM.toFile()).addArguments("--headless=new",
                "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run",
                "--disable-background-networking", "--disable-component-update", "--disable-sync",
                "--window-size=1280,900");
        browser = new ChromeDriver(new ChromeDriverService.Builder().usingDriverExecutable(CHROMEDRIVER.toFile())
                .build(), chrome);
        browser.manage().timeouts().pageLoadTimeout(WAIT).scriptTimeout(WAIT);
    }

    @AfterAll
    static void closeAll() {
        if (browser != null) {
            browser.quit();
        }
        if (app != null) {
            app.close();
        }
        if (wiring != null) {
            wiring.close();
        }
    }

    @BeforeEach
    void loggedOut() {
        browser.manage().deleteAllCookies();
    }

    @Test
    @Order(1)
    void the_overview_shows_the_demos_consumer_running_its_rosters_feeder_active_and_what_was_handled() throws Exception {
        logIn("viewer", USERS.viewerPassword());

        await("the consumer of " + queue + " RUNNING", () -> text("#consumers tr[data-queue='" + queue + "'] .state")
                .equals("RUNNING"));
        await("the rosters feeder ACTIVE", () -> text("#feeders tr[data-view='" + Enrollment.ROSTERS + "'] .state")
                .equals("ACTIVE"));
        List<byte[]> enrollments = new ArrayList<>();
        for (int student = 1; student <= 40; student++) {
            for (int seq = 1; seq <= 5; seq++) {
                enrollments.add(body("{\"entity\":\"s" + student + "\",\"seq\":" + seq + ",\"op\":\"add\","
                        + "\"field\":\"classes\",\"element\":\"CS " + (100 + seq) + "\"}"));
            }
        }
        ConfirmedPublisher.publishAll(publishing, queue, enrollments);

        await("the 200 messages counted on the page", () -> text("#consumers tr[data-queue='" + queue + "'] .handled")
                .equals("200"));
        await("a rate drawn over two refreshes", () -> browser.findElements(By.cssSelector("#chart-rates polyline"))
                .stream().anyMatch(line -> line.getAttribute("points").strip().contains(" ")));
        assertThat(browser.findElements(By.cssSelector("#chart-lag"))).hasSize(1);
    }

    @Test
    @Order(2)
    void poison_is_grouped_by_kind_and_reason_with_its_ages_and_markup_in_a_reason_is_text() throws Exception {
        List<byte[]> messages = new ArrayList<>(dev.orderless.demo.Poison.messages(2));
        messages.add(body("{\"entity\":\"s-markup\",\"seq\":1,\"op\":\"add\",\"field\":\"" + MARKUP.replace("\"", "\\\"")
                + "\",\"element\":\"x\"}"));
        ConfirmedPublisher.publishAll(publishing, queue, messages);
        awaitLetters("three letters stored", 3);

        logIn("operator", USERS.operatorPassword());
        go("#/dead-letters");
        await("the unknown_field group", () -> !browser.findElements(groupOf("unknown_field")).isEmpty());
        assertThat(browser.findElements(By.cssSelector("tr.kind")).stream().map(row -> row.getAttribute("data-kind")))
                .containsExactly("bad_input", "unknown_field");
        assertThat(text("tr.group[data-kind='unknown_field'] .reason")).as("markup in a reason is text").contains(MARKUP);
        assertThat(text("tr.group[data-kind='bad_input'] .ages")).matches("oldest \\d+ s, newest \\d+ s");
        assertThat(browser.findElements(By.cssSelector("#letters tbody tr"))).hasSize(3);
        assertThat(browser.findElements(By.cssSelector("#page img"))).isEmpty();
        screenshot("dead-letters");
    }

    @Test
    @Order(3)
    void a_viewer_cannot_act_and_a_post_made_anyway_answers_403_and_moves_nothing() {
        long before = letters().countDocuments(com.mongodb.client.model.Filters.eq("status", "dead"));
        logIn("viewer", USERS.viewerPassword());
        go("#/dead-letters");
        await("the groups", () -> !browser.findElements(By.cssSelector("tr.group")).isEmpty());

        assertThat(browser.findElements(By.cssSelector("#page button[data-action]"))).isNotEmpty()
                .allSatisfy(button -> assertThat(button.isEnabled()).isFalse());
        assertThat(text("#read-only")).contains("ORDERLESS_OPERATOR");
        Object status = ((JavascriptExecutor) browser).executeAsyncScript(
                "const done = arguments[arguments.length - 1];"
                        + "fetch('api/session').then(r => r.json()).then(s => {"
                        + "  const headers = {'X-Orderless-Console': '1'}; headers[s.csrf.header] = s.csrf.token;"
                        + "  return fetch('api/letters/purge?queue=" + queue + "&kind=bad_input',"
                        + "    {method: 'POST', headers: headers}); }).then(r => done(r.status));");

        assertThat(status).isEqualTo(403L);
        assertThat(letters().countDocuments(com.mongodb.client.model.Filters.eq("status", "dead")))
                .as("nothing purged").isEqualTo(before);
    }

    @Test
    @Order(4)
    void an_entity_id_holding_markup_is_shown_as_text_and_runs_nothing() {
        wiring.students.insertOne(new BsonDocument("_id", new BsonString(MARKUP)).append("classes",
                new org.bson.BsonArray()));
        logIn("viewer", USERS.viewerPassword());
        String title = browser.getTitle();
        browser.get(console + "#/entity/" + java.net.URLEncoder.encode(MARKUP, StandardCharsets.UTF_8).replace("+", "%20"));

        await("the entity page", () -> text("#page h2").contains("Live document of"));
        assertThat(text("#page h2")).contains(MARKUP);
        assertThat(browser.findElements(By.cssSelector("#page img"))).isEmpty();
        assertThat(browser.getTitle()).isEqualTo(title);
        assertThat(alertShown()).isFalse();
    }

    @Test
    @Order(5)
    void an_attribute_changed_by_a_later_add_shows_as_a_change_with_its_value_at_each_seq() throws Exception {
        // an enrollment's seats at seq 12, then changed at 14 (version 3: a 64-bit number, kept so)
        ConfirmedPublisher.publishAll(publishing, queue, List.of(
                body("{\"v\":3,\"entity\":\"s-seats\",\"seq\":12,\"op\":\"add\",\"field\":\"classes\","
                        + "\"element\":\"CS 101\",\"attrs\":{\"seats\":{\"$numberLong\":\"2\"}}}"),
                body("{\"v\":3,\"entity\":\"s-seats\",\"seq\":14,\"op\":\"add\",\"field\":\"classes\","
                        + "\"element\":\"CS 101\",\"attrs\":{\"seats\":{\"$numberLong\":\"5\"}}}")));
        Awaitility.await("seq 14's seats applied").atMost(WAIT).until(() -> {
            BsonDocument student = wiring.students.find(com.mongodb.client.model.Filters.eq("_id", "s-seats")).first();
            return student != null && student.toJson().contains("\"seq\": 14");
        });

        logIn("viewer", USERS.viewerPassword());
        browser.get(console + "#/entity/s-seats");
        await("both versions", () -> !text("#timeline li[data-seq='14'] .outcome").isEmpty());
        assertThat(text("#timeline li[data-seq='12'] .outcome")).isEqualTo("changed the state");
        assertThat(text("#timeline li[data-seq='14'] .outcome")).as("a later add with new attributes is a change")
                .isEqualTo("changed the state");
        browser.findElement(By.cssSelector("#timeline button[data-as-of='12']")).click();
        await("the seats as of seq 12", () -> text("#as-of-state").replaceAll("\\s", "").contains("\"seats\":2"));
        screenshot("entity-versions");
        browser.findElement(By.cssSelector("#timeline button[data-as-of='14']")).click();
        await("the seats as of seq 14", () -> text("#as-of-state").replaceAll("\\s", "").contains("\"seats\":5"));
    }

    @Test
    @Order(6)
    void a_slow_answer_of_the_previous_page_is_aborted_and_never_replaces_the_current_page() {
        twoStudents("race-a", "race-b");
        logIn("viewer", USERS.viewerPassword());
        hold("api/entity?id=race-a");

        go("#/entity/race-a");
        await("the read of race-a held", () -> heldRequests() == 1);
        go("#/entity/race-b");
        await("race-b's page", () -> text("#entity-document").contains("race-b"));
        release();

        await("race-a's answer handled", () -> dropped() >= 1 || text("#page h2").contains("race-a"));
        assertThat(text("#page h2")).contains("race-b").doesNotContain("race-a");
        assertThat(text("#entity-document")).contains("race-b");
        assertThat(heldSignalAborted()).as("the earlier route's read was aborted").isTrue();
    }

    @Test
    @Order(7)
    void the_state_as_of_a_seq_of_the_previous_entity_is_not_shown_on_the_next_entitys_page() {
        twoStudents("race-c", "race-d");
        logIn("viewer", USERS.viewerPassword());
        go("#/entity/race-c");
        await("race-c's versions", () -> !browser.findElements(By.cssSelector("#timeline button[data-as-of='1']"))
                .isEmpty());
        hold("api/entity/as-of?id=race-c");

        browser.findElement(By.cssSelector("#timeline button[data-as-of='1']")).click();
        await("the as-of read of race-c held", () -> heldRequests() == 1);
        go("#/entity/race-d");
        await("race-d's versions", () -> text("#entity-document").contains("race-d")
                && !browser.findElements(By.cssSelector("#timeline button[data-as-of='1']")).isEmpty());
        release();

        await("race-c's as-of answer handled", () -> dropped() >= 1 || !text("#as-of").isEmpty());
        assertThat(text("#as-of")).as("race-c's state on race-d's page").isEmpty();
        assertThat(text("#page h2")).contains("race-d");
    }

    @Test
    @Order(8)
    void the_status_line_of_one_page_is_gone_on_the_next() {
        logIn("viewer", USERS.viewerPassword());
        go("#/entity/ghost-7");
        await("the entity's 404 line", () -> text("#status").equals(
                "no entity 'ghost-7': no live document and no recorded version"));
        assertThat(text("#page")).doesNotContain("{}");

        go("#/overview");
        await("the overview", () -> text("#consumers tr[data-queue='" + queue + "'] .state").equals("RUNNING"));
        assertThat(text("#status")).isEmpty();
    }

    @Test
    @Order(9)
    void a_loading_line_says_what_the_page_awaits_until_its_first_answer() {
        twoStudents("slow-a", "slow-b");
        logIn("viewer", USERS.viewerPassword());
        hold("api/entity?id=slow-a");

        go("#/entity/slow-a");
        await("the read held", () -> heldRequests() == 1);
        assertThat(browser.findElement(By.id("loading")).isDisplayed()).isTrue();
        assertThat(text("#loading")).isEqualTo("Loading entity slow-a…");
        release();

        await("the entity's page", () -> text("#entity-document").contains("slow-a"));
        assertThat(browser.findElement(By.id("loading")).isDisplayed()).isFalse();
    }

    @Test
    @Order(10)
    void an_id_shows_every_character_outside_printable_ascii_escaped_so_no_look_alike_or_reversal_hides() throws Exception {
        String lookAlike = "s\u0441\u202E1";   // a Cyrillic es, then a right-to-left override
        wiring.students.insertOne(new BsonDocument("_id", new BsonString(lookAlike)).append("classes",
                new org.bson.BsonArray()));
        logIn("viewer", USERS.viewerPassword());

        go("#/entity/" + java.net.URLEncoder.encode(lookAlike, StandardCharsets.UTF_8));

        await("the entity's page", () -> text("#page h2").startsWith("Live document of"));
        assertThat(text("#page h2 .id")).isEqualTo("s\\u0441\\u202E1");
        assertThat(browser.findElements(By.cssSelector("#page h2 .id .esc"))).hasSize(2);
        screenshot("escaped-id");
    }

    @Test
    @Order(11)
    void free_text_shows_bidirectional_and_zero_width_characters_escaped_and_keeps_other_letters() {
        logIn("viewer", USERS.viewerPassword());

        go("#/entity/" + java.net.URLEncoder.encode("g\u0441\u202E\u200B7", StandardCharsets.UTF_8));

        await("the entity's 404 line", () -> text("#status").startsWith("no entity"));
        assertThat(text("#status")).isEqualTo(
                "no entity 'g\u0441\\u202E\\u200B7': no live document and no recorded version");
        assertThat(browser.findElements(By.cssSelector("#status .esc"))).hasSize(2);
    }

    @Test
    @Order(12)
    void an_edited_letter_is_replayed_and_applied() throws Exception {
        ConfirmedPublisher.publishAll(publishing, queue, List.of(body(
                "{\"entity\":\"s-edit\",\"seq\":1,\"op\":\"enroll\",\"course\":\"CS 205\"}")));
        awaitLetterOf("s-edit");
        logIn("operator", USERS.operatorPassword());
        openLetterOf("s-edit");

        browser.findElement(By.id("edit")).click();
        WebElement editor = browser.findElement(By.id("edit-body"));
        assertThat(editor.getAttribute("value")).contains("enroll");
        editor.clear();
        editor.sendKeys("{\"entity\":\"s-edit\",\"seq\":1,\"op\":\"add\",\"field\":\"classes\","
                + "\"element\":\"CS 205\"}");
        browser.findElement(By.id("edit-send")).click();
        browser.findElement(By.id("confirm-yes")).click();

        await("the result line", () -> text("#status").startsWith("edited and replayed letter"));
        Awaitility.await("the edited enrollment applied").atMost(WAIT).until(() -> student("s-edit").contains("CS 205"));
        await("the letter shown replayed", () -> text("#letter-status").equals("replayed"));
        assertThat(text("#letter-audit tr[data-action='edit-replay'] .outcome")).startsWith("edited and replayed");
        screenshot("letter");
    }

    @Test
    @Order(13)
    void an_edited_body_that_is_no_orderless_message_is_refused_and_nothing_is_sent() throws Exception {
        ConfirmedPublisher.publishAll(publishing, queue, List.of(body(
                "{\"entity\":\"s-edit-2\",\"seq\":1,\"op\":\"enroll\"}")));
        awaitLetterOf("s-edit-2");
        logIn("operator", USERS.operatorPassword());
        openLetterOf("s-edit-2");

        browser.findElement(By.id("edit")).click();
        browser.findElement(By.id("edit-body")).clear();
        browser.findElement(By.id("edit-body")).sendKeys("not a message");
        browser.findElement(By.id("edit-send")).click();
        browser.findElement(By.id("confirm-yes")).click();

        await("the refusal", () -> text("#status").startsWith("the edited body is not an orderless message"));
        assertThat(text("#letter-status")).isEqualTo("dead");
        assertThat(letters().countDocuments(com.mongodb.client.model.Filters.and(
                com.mongodb.client.model.Filters.eq("entity", "s-edit-2"),
                com.mongodb.client.model.Filters.eq("status", "dead")))).isEqualTo(1);
    }

    @Test
    @Order(14)
    void a_parked_letter_is_listed_as_parked_and_once_un_parked_is_dead_again() throws Exception {
        ConfirmedPublisher.publishAll(publishing, queue, List.of(body(
                "{\"entity\":\"s-park\",\"seq\":1,\"op\":\"enroll\"}")));
        awaitLetterOf("s-park");
        logIn("operator", USERS.operatorPassword());
        openLetterOf("s-park");

        act("park");
        await("the park's result", () -> text("#status").startsWith("parked 1 letter(s)"));
        await("the letter parked", () -> text("#letter-status").equals("parked"));
        go("#/parked");
        await("the parked letter listed", () -> !browser.findElements(By.cssSelector(
                "#letters tr[data-entity='s-park']")).isEmpty());
        browser.findElement(By.cssSelector("#letters tr[data-entity='s-park'] a.open")).click();
        await("the parked letter's page", () -> text("#letter-status").equals("parked"));
        act("unpark");

        await("the un-park's result", () -> text("#status").startsWith("un-parked 1 letter(s)"));
        await("the letter dead again", () -> text("#letter-status").equals("dead"));
        assertThat(browser.findElements(By.cssSelector("#letter-audit tr[data-action]")).stream()
                .map(row -> row.getAttribute("data-action"))).containsExactlyInAnyOrder("park", "unpark");
        go("#/parked?entity=s-park");
        await("no parked letter of s-park", () -> !browser.findElements(By.id("no-match")).isEmpty());
    }

    @Test
    @Order(15)
    void a_letter_past_the_10000th_is_found_by_entity_and_replayed_once_its_cause_is_fixed() throws Exception {
        // a script broke a student: its classes are a plain string, so no enrollment can be applied to it
        wiring.students.insertOne(new BsonDocument("_id", new BsonString("s-broken")).append("classes",
                new BsonString("oops")));
        ConfirmedPublisher.publishAll(publishing, queue, List.of(body(
                "{\"entity\":\"s-broken\",\"seq\":1,\"op\":\"add\",\"field\":\"classes\",\"element\":\"CS 101\"}")));
        awaitLetterOf("s-broken");
        long before = letters().countDocuments();
        long published = System.nanoTime();
        publishLetters(BULK);   // newer than s-broken's: 10,000 letters ahead of it, newest first
        awaitLetters(BULK + " more letters stored", before + BULK);
        double seconds = (System.nanoTime() - published) / 1e9;
        System.out.printf("[console benchmark] %d letters published to the dead-letter queue and ingested in %.1f s:"
                + " %.0f letters/s%n", BULK, seconds, BULK / seconds);

        logIn("operator", USERS.operatorPassword());
        long opened = System.nanoTime();
        go("#/dead-letters");
        Awaitility.await("the first rows").atMost(WAIT).pollInterval(Duration.ofMillis(20)).ignoreExceptions()
                .until(() -> !browser.findElements(By.cssSelector("#letters tbody tr")).isEmpty());
        System.out.printf("[console benchmark] the dead-letters page showed its first rows %d ms after it was opened,"
                + " %d letters stored%n", (System.nanoTime() - opened) / 1_000_000, letters().countDocuments());
        assertThat(Long.parseLong(text("#letters-total strong"))).isGreaterThan(BULK);
        assertThat(browser.findElements(By.cssSelector("#letters tr[data-entity='s-broken']"))).isEmpty();
        screenshot("dead-letters-10000");

        browser.findElement(By.id("filter-entity")).sendKeys("s-broken");
        browser.findElement(By.id("filter-apply")).click();
        await("s-broken's letter found", () -> !browser.findElements(By.cssSelector(
                "#letters tr[data-entity='s-broken']")).isEmpty());
        assertThat(text("#letters-total strong")).isEqualTo("1");
        browser.findElement(By.cssSelector("#letters tr[data-entity='s-broken'] a.open")).click();
        await("its page", () -> text("#letter-status").equals("dead"));
        // the fix: the broken field goes (as restoring the document would), then the letter is replayed
        wiring.students.updateOne(com.mongodb.client.model.Filters.eq("_id", "s-broken"),
                com.mongodb.client.model.Updates.unset("classes"));
        act("replay");

        await("the result line", () -> text("#status").startsWith("replayed 1 letter(s)"));
        Awaitility.await("the replayed enrollment applied").atMost(WAIT).until(() -> student("s-broken")
                .contains("CS 101"));
        go("#/entity/s-broken");
        await("the live document", () -> text("#entity-document").contains("CS 101"));
        assertThat(text("#timeline li[data-seq='1'] .outcome")).isEqualTo("changed the state");
        browser.findElement(By.cssSelector("#timeline button[data-as-of='1']")).click();
        await("the state as of seq 1", () -> text("#as-of-state").contains("CS 101"));
        screenshot("entity");
    }

    @Test
    @Order(16)
    void every_action_taken_is_on_record_in_the_audit_with_who_took_it() throws Exception {
        logIn("viewer", USERS.viewerPassword());
        go("#/audit");

        await("the audit", () -> !browser.findElements(By.cssSelector("#audit tr[data-audit]")).isEmpty());
        List<String> actions = browser.findElements(By.cssSelector("#audit tr[data-audit]")).stream()
                .map(row -> row.getAttribute("data-action")).toList();
        assertThat(actions).as("newest first").containsExactly("replay", "unpark", "park", "edit-replay",
                "edit-replay");
        assertThat(browser.findElements(By.cssSelector("#audit tr[data-audit] td:nth-child(2)")))
                .allSatisfy(user -> assertThat(user.getText()).isEqualTo("operator"));
        assertThat(text("#audit tr[data-action='replay'] .count")).isEqualTo("1");
        screenshot("audit");
    }

    @Test
    @Order(17)
    void the_overview_shows_each_queues_backlog_and_draws_dead_lettered_per_second_from_the_consumers_counters()
            throws Exception {
        logIn("viewer", USERS.viewerPassword());
        await("the backlog of " + queue, () -> !text("#backlog tr[data-queue='" + queue + "'] .ready").isEmpty());
        await("a first rate", () -> !text("#consumers tr[data-queue='" + queue + "'] .dead-rate").equals("…"));

        ConfirmedPublisher.publishAll(publishing, queue, dev.orderless.demo.Poison.messages(20, 100));

        await("dead letters counted as a rate", () -> Double.parseDouble(text("#consumers tr[data-queue='" + queue
                + "'] .dead-rate")) > 0);
        assertThat(browser.findElements(By.cssSelector("#chart-rates polyline[data-series='" + queue
                + " dead-lettered']"))).hasSize(1);
        assertThat(text("#backlog tr[data-queue='" + queue + "'] td:nth-child(5)")).isEqualTo(queue + ".dlq");
        screenshot("overview");
    }

    @Test
    @Order(18)
    void two_instances_consumers_show_on_one_page_and_the_one_that_stops_is_shown_stopped() throws Exception {
        logIn("viewer", USERS.viewerPassword());
        go("#/overview");
        await("this instance", () -> !text("#instance .id").isEmpty());
        String here = text("#instance .id");
        List<String> instances;
        try (Wiring second = Wiring.connect(wiring.options)) {
            ConfigurableApplicationContext otherApp = DemoBoot.console(second, new SimpleMeterRegistry(), 0, USERS);
            try {
                go("#/fleet");
                await("two instances up, each with its consumer of " + queue, () -> upWithConsumer().size() == 2);
                instances = upWithConsumer();
                screenshot("fleet");
            } finally {
                otherApp.close();
            }
        }
        assertThat(instances).contains(here);
        String other = instances.get(instances.indexOf(here) == 0 ? 1 : 0);

        await("the other instance shown stopped", () -> text("#instances tr[data-instance='" + other + "'] .state")
                .equals("STOPPED"));
        assertThat(text("#instances tr[data-instance='" + here + "'] .state")).isEqualTo("UP");
    }

    @Test
    @Order(19)
    void the_banner_names_a_consumer_stuck_waiting_for_mongodb_on_every_page_and_links_to_the_fleet() throws Exception {
        logIn("viewer", USERS.viewerPassword());
        go("#/audit");
        String problem = "#banner .problem[data-severity='error']";
        try (dev.orderless.testing.FailPoint full = dev.orderless.testing.FailPoint.alwaysOn(wiring.client,
                dev.orderless.testing.FailPoint.Data.failing("update", "findAndModify", "insert", "delete")
                        .withError(14031).onNamespace(wiring.students.getNamespace().getFullName()))) {
            // MongoDB refuses the students' writes (its disk full): the consumer holds the message and waits
            ConfirmedPublisher.publishAll(publishing, queue, List.of(body("{\"entity\":\"s-stuck\",\"seq\":1,"
                    + "\"op\":\"add\",\"field\":\"classes\",\"element\":\"CS 301\"}")));

            await("the banner", () -> text(problem).contains("consumer of queue '" + queue + "'"));
            assertThat(text(problem)).contains("stuck").contains("MongoDB");
            assertThat(text("#page h2")).as("on the page the operator was on").isEqualTo("Actions on record");
            screenshot("banner");
            browser.findElement(By.cssSelector(problem + " a")).click();
            await("the fleet", () -> !browser.findElements(By.id("instances")).isEmpty());
        }

        Awaitility.await("the held message applied once MongoDB takes writes").atMost(WAIT)
                .until(() -> student("s-stuck").contains("CS 301"));
        await("the banner without the stuck consumer", () -> !text("#banner").contains("stuck"));
    }

    private void logIn(String user, String password) {
        browser.get(console);
        await("the login form", () -> !browser.findElements(By.name("username")).isEmpty());
        browser.findElement(By.name("username")).sendKeys(user);
        browser.findElement(By.name("password")).sendKeys(password);
        browser.findElement(By.cssSelector("button[type='submit']")).click();
        await("the console after logging in", () -> browser.getCurrentUrl().startsWith(console)
                && text("#session").startsWith(user));
    }

    private static com.mongodb.client.MongoCollection<BsonDocument> letters() {
        return wiring.db.getCollection("orderless_dead_letters", BsonDocument.class);
    }

    private static void awaitLetters(String what, long count) {
        Awaitility.await(what).atMost(WAIT).until(() -> letters().countDocuments() >= count);
    }

    private static void awaitLetterOf(String entity) {
        Awaitility.await("a letter of " + entity + " stored").atMost(WAIT).until(() -> letters().countDocuments(
                com.mongodb.client.model.Filters.eq("entity", entity)) == 1);
    }

    private static String student(String id) {
        BsonDocument student = wiring.students.find(com.mongodb.client.model.Filters.eq("_id", id)).first();
        return student == null ? "" : student.toJson();
    }

    /** Finds the letter of {@code entity} with the page's search and opens it. */
    private static void openLetterOf(String entity) {
        go("#/dead-letters?entity=" + entity);
        await("the letter of " + entity, () -> !browser.findElements(By.cssSelector("#letters tr[data-entity='" + entity
                + "'] a.open")).isEmpty());
        browser.findElement(By.cssSelector("#letters tr[data-entity='" + entity + "'] a.open")).click();
        await("its page", () -> !text("#letter-status").isEmpty());
    }

    /** Clicks the letter page's {@code verb} button and confirms. */
    private static void act(String verb) {
        browser.findElement(By.cssSelector("#letter-actions button[data-action='" + verb + "']")).click();
        browser.findElement(By.id("confirm-yes")).click();
    }

    /**
     * {@code count} letters as the consumer dead-letters them (its headers, a letter id each), published straight to
     * the dead-letter queue: the console's ingestion stores them as it stores real ones.
     */
    private static void publishLetters(int count) throws Exception {
        String deadLetterQueue = queue + ".dlq";
        String now = java.time.Instant.now().toString();
        try (org.springframework.amqp.rabbit.connection.Connection connection = publishing.createConnection();
             com.rabbitmq.client.Channel channel = connection.createChannel(false)) {
            channel.confirmSelect();
            for (int i = 0; i < count; i++) {
                java.util.Map<String, Object> headers = new java.util.HashMap<>();
                headers.put("x-orderless-reason", "missing 'seq' (entity 'bulk-" + i + "')");
                headers.put("x-orderless-reason-kind", "bad_input");
                headers.put("x-orderless-entity", "bulk-" + i);
                headers.put("x-orderless-dead-lettered-at", now);
                headers.put("x-orderless-dead-letter-id", "bulk-" + i + "-" + queue);
                channel.basicPublish("", deadLetterQueue, new com.rabbitmq.client.AMQP.BasicProperties.Builder()
                        .headers(headers).deliveryMode(2).contentType("application/json").build(),
                        body("{\"entity\":\"bulk-" + i + "\",\"op\":\"add\"}"));
            }
            channel.waitForConfirmsOrDie(WAIT.toMillis());
        }
    }

    /** The instances the fleet page shows UP with a RUNNING consumer of the test's queue. */
    private static List<String> upWithConsumer() {
        return browser.findElements(By.cssSelector("#instances tr[data-instance]")).stream()
                .map(row -> row.getAttribute("data-instance"))
                .filter(id -> text("#instances tr[data-instance='" + id + "'] .state").equals("UP")
                        && text("section.instance[data-instance='" + id + "'] tr[data-queue='" + queue + "'] .state")
                        .equals("RUNNING"))
                .toList();
    }

    /** Two students with one version each, applied through the queue. */
    private static void twoStudents(String first, String second) {
        try {
            ConfirmedPublisher.publishAll(publishing, queue, List.of(
                    body("{\"entity\":\"" + first + "\",\"seq\":1,\"op\":\"add\",\"field\":\"classes\","
                            + "\"element\":\"CS 101\"}"),
                    body("{\"entity\":\"" + second + "\",\"seq\":1,\"op\":\"add\",\"field\":\"classes\","
                            + "\"element\":\"CS 102\"}")));
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
        Awaitility.await(first + " and " + second + " applied").atMost(WAIT).until(() -> wiring.students.countDocuments(
                com.mongodb.client.model.Filters.in("_id", first, second)) == 2);
    }

    private static void go(String hash) {
        js("location.hash = arguments[0];", hash);
    }

    /**
     * Holds the answer of the page's next read whose URL contains {@code part} until {@link #release()}: the page's
     * fetch is wrapped, the read itself goes out without the page's abort signal (so an answer does come, and the page
     * must drop it itself), and whether the page aborted it is recorded when it is released. A forced interleaving,
     * not a race against the clock.
     */
    private static void hold(String part) {
        js("const held = {part: arguments[0], count: 0, aborted: null, signals: []};"
                + "held.gate = new Promise(resolve => { held.open = resolve; });"
                + "window.__held = held;"
                + "if (!window.__realFetch) window.__realFetch = window.fetch;"
                + "window.fetch = function (url, options) {"
                + "  if (!String(url).includes(held.part) || held.count > 0) return window.__realFetch(url, options);"
                + "  held.count++;"
                + "  const signal = options && options.signal;"
                + "  const rest = Object.assign({}, options || {}); delete rest.signal;"
                + "  return window.__realFetch(url, rest).then(response => held.gate.then(() => {"
                + "    held.aborted = !!(signal && signal.aborted); return response; }));"
                + "};", part);
    }

    private static long heldRequests() {
        return ((Number) js("return window.__held ? window.__held.count : 0;")).longValue();
    }

    private static void release() {
        js("window.__held.open(); window.fetch = window.__realFetch;");
    }

    private static boolean heldSignalAborted() {
        return Boolean.TRUE.equals(js("return window.__held.aborted;"));
    }

    /** Answers the page dropped because they came for an earlier route. */
    private static long dropped() {
        Object count = js("return document.body.getAttribute('data-dropped');");
        return count == null ? 0 : Long.parseLong(count.toString());
    }

    private static Object js(String script, Object... arguments) {
        return ((JavascriptExecutor) browser).executeScript(script, arguments);
    }

    private static By groupOf(String kind) {
        return By.cssSelector("tr.group[data-kind='" + kind + "']");
    }

    private static String text(String css) {
        List<WebElement> found = browser.findElements(By.cssSelector(css));
        return found.isEmpty() ? "" : found.get(0).getText();
    }

    private static void await(String what, java.util.concurrent.Callable<Boolean> condition) {
        Awaitility.await(what).atMost(WAIT).ignoreExceptions().until(condition);
    }

    private static boolean alertShown() {
        try {
            browser.switchTo().alert();
            return true;
        } catch (NoAlertPresentException e) {
            return false;
        }
    }

    private static byte[] body(String json) {
        return json.getBytes(StandardCharsets.UTF_8);
    }

    private static void screenshot(String name) throws IOException {
        Files.createDirectories(SCREENSHOTS);
        Files.write(SCREENSHOTS.resolve(name + ".png"), ((TakesScreenshot) browser).getScreenshotAs(OutputType.BYTES));
    }
}
