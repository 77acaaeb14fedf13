package dev.orderless.demo;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.orderless.backends.MongoBackend;
import dev.orderless.backends.rabbit.RabbitBackend;
import dev.orderless.testing.MongoExtension;
import dev.orderless.testing.rabbit.ConfirmedPublisher;
import dev.orderless.testing.rabbit.RabbitExtension;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import org.awaitility.Awaitility;
import org.bson.BsonDocument;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.openqa.selenium.By;
import org.openqa.selenium.JavascriptExecutor;
import org.openqa.selenium.WebDriver;
import org.openqa.selenium.WebElement;
import org.openqa.selenium.chrome.ChromeDriver;
import org.openqa.selenium.chrome.ChromeDriverService;
import org.openqa.selenium.chrome.ChromeOptions;
import org.springframework.amqp.rabbit.connection.ConnectionFactory;
import org.springframework.context.ConfigurableApplicationContext;

/**
 * The console's page against answers that come late or out of order within one page (a second click before the
 * first's answer, a letter arriving between the listing and the confirmation), in headless Chromium against the
 * demo's console application, as {@link ConsoleBrowserTest}. Each interleaving is forced by holding an answer, not
 * raced against the clock.
 */
@Tag("browser")
@ExtendWith({MongoExtension.class, RabbitExtension.class})
class ConsolePageRaceTest {
    private static final Path CHROMIUM = Path.of("/usr/bin/chromium");
    private static final Path CHROMEDRIVER = Path.of("/usr/bin/chromedriver");
    private static final DemoBoot.ConsoleUsers USERS = new DemoBoot.ConsoleUsers("operator-pw", "viewer-pw");
    private static final Duration WAIT = Duration.ofSeconds(30);

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
        queue = RabbitExtension.uniqueQueue("console-race");
        DemoOptions options = DemoOptions.ofDefaults("serve").withHistory(true).withConsumers(2, 0)
                .withBackends(Optional.of(mongo.connectionString()), Optional.of(rabbit.uri().toString()))
                .withPlace(MongoBackend.freshDatabaseName("console_race"), queue);
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
    void the_next_page_asked_for_twice_before_its_answer_is_listed_once() throws Exception {
        publishLetters("more", 120);
        awaitLetters("more", 120);
        logIn("viewer", USERS.viewerPassword());
        go("#/dead-letters?kind=more");
        await("the first 50", () -> rows().size() == 50);
        hold("after=");

        click("#more");
        await("the next page's read held", () -> heldRequests() == 1);
        click("#more");   // the button is still there: the operator clicks again
        release();

        await("every answer handled", () -> rows().size() >= 100 && heldAnswered());
        List<String> ids = rows();
        assertThat(new HashSet<>(ids)).as("letters listed twice among %s rows", ids.size()).hasSameSizeAs(ids);
    }

    @Test
    void a_matching_action_takes_no_more_letters_than_the_confirmation_counted() throws Exception {
        publishLetters("counted", 2);
        awaitLetters("counted", 2);
        logIn("operator", USERS.operatorPassword());
        go("#/dead-letters?kind=counted");
        await("the two listed", () -> rows().size() == 2);
        click("button[data-matching='park']");
        await("the confirmation", () -> text("#confirm").contains("2 letter(s)"));

        publishLetters("counted", 1);   // a third arrives while the operator reads the question
        awaitLetters("counted", 3);
        click("#confirm-yes");

        await("the park's result", () -> text("#status").contains("park"));
        assertThat(letters().countDocuments(com.mongodb.client.model.Filters.and(
                com.mongodb.client.model.Filters.eq("kind", "counted"),
                com.mongodb.client.model.Filters.eq("status", "parked"))))
                .as("parked after confirming 'Park all 2': %s", text("#status")).isEqualTo(2);
    }

    @Test
    void a_slow_state_as_of_an_earlier_seq_does_not_replace_the_seq_picked_after_it() throws Exception {
        String id = "asof-" + Long.toHexString(System.nanoTime());
        ConfirmedPublisher.publishAll(publishing, queue, List.of(
                body("{\"entity\":\"" + id + "\",\"seq\":1,\"op\":\"add\",\"field\":\"classes\",\"element\":\"CS 1\"}"),
                body("{\"entity\":\"" + id + "\",\"seq\":2,\"op\":\"add\",\"field\":\"classes\",\"element\":\"CS 2\"}")));
        Awaitility.await("both versions applied").atMost(WAIT).until(() -> {
            BsonDocument student = wiring.students.find(com.mongodb.client.model.Filters.eq("_id", id)).first();
            return student != null && student.toJson().contains("CS 2") && student.toJson().contains("CS 1");
        });
        logIn("viewer", USERS.viewerPassword());
        go("#/entity/" + id);
        await("both versions listed", () -> browser.findElements(By.cssSelector("#timeline button[data-as-of]"))
                .size() == 2);
        hold("seq=1");

        click("#timeline button[data-as-of='1']");
        await("seq 1's state held", () -> heldRequests() == 1);
        click("#timeline button[data-as-of='2']");
        await("seq 2's state shown", () -> text("#as-of h2").equals("As of seq 2"));
        release();

        await("seq 1's answer handled", () -> heldAnswered());
        assertThat(text("#as-of h2")).as("the seq picked last").isEqualTo("As of seq 2");
        assertThat(text("#timeline li.picked")).contains("seq 2");
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

    private static List<String> rows() {
        return browser.findElements(By.cssSelector("#letters tbody tr[data-letter]")).stream()
                .map(row -> row.getAttribute("data-letter")).toList();
    }

    private static com.mongodb.client.MongoCollection<BsonDocument> letters() {
        return wiring.db.getCollection("orderless_dead_letters", BsonDocument.class);
    }

    private static void awaitLetters(String kind, long count) {
        Awaitility.await(count + " letters of kind " + kind + " stored").atMost(WAIT).until(() -> letters()
                .countDocuments(com.mongodb.client.model.Filters.eq("kind", kind)) >= count);
    }

    /** {@code count} letters of {@code kind}, as the consumer dead-letters them, straight to the dead-letter queue. */
    private static void publishLetters(String kind, int count) throws Exception {
        String now = java.time.Instant.now().toString();
        try (org.springframework.amqp.rabbit.connection.Connection connection = publishing.createConnection();
             com.rabbitmq.client.Channel channel = connection.createChannel(false)) {
            channel.confirmSelect();
            for (int i = 0; i < count; i++) {
                String entity = kind + "-" + java.util.UUID.randomUUID();
                java.util.Map<String, Object> headers = new java.util.HashMap<>();
                headers.put("x-orderless-reason", "missing 'seq' (entity '" + entity + "')");
                headers.put("x-orderless-reason-kind", kind);
                headers.put("x-orderless-entity", entity);
                headers.put("x-orderless-dead-lettered-at", now);
                headers.put("x-orderless-dead-letter-id", entity);
                channel.basicPublish("", queue + ".dlq", new com.rabbitmq.client.AMQP.BasicProperties.Builder()
                        .headers(headers).deliveryMode(2).contentType("application/json").build(),
                        body("{\"entity\":\"" + entity + "\",\"op\":\"add\"}"));
            }
            channel.waitForConfirmsOrDie(WAIT.toMillis());
        }
    }

    private static void go(String hash) {
        js("location.hash = arguments[0];", hash);
    }

    private static void click(String css) {
        browser.findElement(By.cssSelector(css)).click();
    }

    /** Holds the answer of the page's next read whose URL contains {@code part} until {@link #release()}. */
    private static void hold(String part) {
        js("const held = {part: arguments[0], count: 0, answered: false};"
                + "held.gate = new Promise(resolve => { held.open = resolve; });"
                + "window.__held = held;"
                + "if (!window.__realFetch) window.__realFetch = window.fetch;"
                + "window.fetch = function (url, options) {"
                + "  if (!String(url).includes(held.part) || held.count > 0) return window.__realFetch(url, options);"
                + "  held.count++;"
                + "  return window.__realFetch(url, options).then(response => held.gate.then(() => {"
                + "    const json = response.json.bind(response);"
                // the page's work on the body runs in the microtasks after it is read: a task later, it is done
                + "    response.json = () => json().then(v => { setTimeout(() => { held.answered = true; }, 0);"
                + "      return v; });"
                + "    return response; }));"
                + "};", part);
    }

    private static long heldRequests() {
        return ((Number) js("return window.__held ? window.__held.count : 0;")).longValue();
    }

    /** The held answer was given to the page, and the page's work on it (a task later) is done. */
    private static boolean heldAnswered() {
        return Boolean.TRUE.equals(js("return window.__held.answered;"));
    }

    private static void release() {
        js("window.__held.open(); window.fetch = window.__realFetch;");
    }

    private static Object js(String script, Object... arguments) {
        return ((JavascriptExecutor) browser).executeScript(script, arguments);
    }

    private static String text(String css) {
        List<WebElement> found = browser.findElements(By.cssSelector(css));
        return found.isEmpty() ? "" : found.get(0).getText();
    }

    private static void await(String what, java.util.concurrent.Callable<Boolean> condition) {
        Awaitility.await(what).atMost(WAIT).ignoreExceptions().until(condition);
    }

    private static byte[] body(String json) {
        return json.getBytes(StandardCharsets.UTF_8);
    }
}
