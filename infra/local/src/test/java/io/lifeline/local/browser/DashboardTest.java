package io.lifeline.local.browser;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.lifeline.local.app.LifelineLocal;
import io.lifeline.local.http.FrontDoor;
import io.lifeline.local.stack.TestStack;
import java.io.File;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Clock;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.openqa.selenium.By;
import org.openqa.selenium.JavascriptExecutor;
import org.openqa.selenium.OutputType;
import org.openqa.selenium.StaleElementReferenceException;
import org.openqa.selenium.TakesScreenshot;
import org.openqa.selenium.WebDriver;
import org.openqa.selenium.WebElement;
import org.openqa.selenium.chrome.ChromeDriver;
import org.openqa.selenium.chrome.ChromeDriverService;
import org.openqa.selenium.chrome.ChromeOptions;
import org.openqa.selenium.support.ui.ExpectedConditions;
import org.openqa.selenium.support.ui.Select;
import org.openqa.selenium.support.ui.WebDriverWait;

/**
 * The dashboard in a real headless Chromium (Debian's chromium and chromium-driver) against Lifeline Local
 * in-process: sign in, the team view's rows, badges, counts and filter, the live age, an agent's page, a wrong
 * key, and the banner when the API goes away. Skipped only when the browser or its driver is not installed.
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
@Tag("browser")
class DashboardTest {
    static final Map<String, String> LABELS = Map.of("ready", "READY", "working", "WORKING", "offline", "OFFLINE",
            "dead", "DEAD", "restarting", "RESTARTING", "dead_failed_revive", "DEAD (UNRECOVERABLE)");
    static final ObjectMapper JSON = new ObjectMapper();
    static final Duration WAIT = Duration.ofSeconds(15);

    static LifelineLocal local;
    static WebDriver driver;
    static HttpClient http;
    static String base;

    @BeforeAll
    static void start() throws Exception {
        assumeChromium();
        local = LifelineLocal.start(new LifelineLocal.Options(0, null, TestStack.template(), Map.of(),
                Clock.systemUTC()));
        base = local.url().toString();
        http = HttpClient.newHttpClient();

        post("/v1/teams/local/agents", "{\"agentId\":\"ada\",\"name\":\"Ada\",\"role\":\"planner\","
                + "\"hostId\":\"host-a\",\"staleAfterSeconds\":600}");
        post("/v1/teams/local/agents/ada/join", "{}");
        post("/v1/teams/local/agents", "{\"agentId\":\"bob\",\"name\":\"Bob\",\"role\":\"coder\","
                + "\"hostId\":\"host-b\",\"staleAfterSeconds\":600}");
        post("/v1/teams/local/agents/bob/join", "{}");
        post("/v1/teams/local/tasks", "{\"taskId\":\"task-7\",\"title\":\"Write the docs\"}");
        post("/v1/teams/local/tasks/task-7/claim", "{\"agentId\":\"bob\"}");
        post("/v1/teams/local/agents", "{\"agentId\":\"cyd\",\"name\":\"Cyd\",\"role\":\"tester\","
                + "\"staleAfterSeconds\":600}");
        post("/v1/teams/local/agents/cyd/join", "{}");
        post("/v1/teams/local/agents/cyd/fail", "{\"reason\":\"segfault\"}");
        post("/v1/teams/local/agents", "{\"agentId\":\"dee\",\"name\":\"Dee\",\"role\":\"reviewer\","
                + "\"staleAfterSeconds\":600}");

        driver = chrome();
    }

    static void assumeChromium() {
        Assumptions.assumeTrue(new File("/usr/bin/chromium").canExecute(), "no /usr/bin/chromium");
        Assumptions.assumeTrue(new File("/usr/bin/chromedriver").canExecute(), "no /usr/bin/chromedriver");
    }

    /** Debian's headless Chromium as the dashboard tests drive it (this class and {@link DashboardLiveTest}). */
    static ChromeDriver chrome() {
        ChromeDriverService service = new ChromeDriverService.Builder()
                .usingDriverExecutable(new File("/usr/bin/chromedriver")).usingAnyFreePort().build();
        ChromeOptions options = new ChromeOptions();
        options.setBinary("/usr/bin/chromium");
        options.addArguments("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                "--disable-background-networking", "--disable-component-update", "--disable-sync",
                "--no-first-run", "--window-size=1280,900");
        return new ChromeDriver(service, options);
    }

    /** For an {@code @AfterAll}: quits the browser, then closes the front door and the stack, each one started. */
    static void close(WebDriver browser, FrontDoor door, TestStack stack) {
        if (browser != null) {
            browser.quit();
        }
        if (door != null) {
            door.close();
        }
        if (stack != null) {
            stack.close();
        }
    }

    @AfterAll
    static void stop() throws Exception {
        if (driver != null) {
            driver.quit();
        }
        if (local != null) {
            local.close();
        }
    }

    static JsonNode post(String path, String body) throws Exception {
        return send(HttpRequest.newBuilder(URI.create(base + path)).POST(HttpRequest.BodyPublishers.ofString(body)));
    }

    static JsonNode get(String path) throws Exception {
        return send(HttpRequest.newBuilder(URI.create(base + path)).GET());
    }

    static JsonNode send(HttpRequest.Builder request) throws Exception {
        HttpResponse<String> r = http.send(request.header("Authorization", "Bearer " + local.adminKey())
                .header("content-type", "application/json").build(), HttpResponse.BodyHandlers.ofString());
        assertTrue(r.statusCode() < 300, r.statusCode() + " " + r.body());
        return JSON.readTree(r.body());
    }

    static WebDriverWait waiting() {
        // The page redraws a table when its data changed; an element found just before may be gone.
        return (WebDriverWait) new WebDriverWait(driver, WAIT).ignoring(StaleElementReferenceException.class);
    }

    static void signIn(String team, String key) {
        driver.get(base + "/");
        WebElement teamInput = waiting().until(ExpectedConditions.visibilityOfElementLocated(By.id("team-input")));
        teamInput.clear();
        teamInput.sendKeys(team);
        driver.findElement(By.id("key-input")).sendKeys(key);
        driver.findElement(By.id("login-button")).click();
    }

    /** The statuses the API reports now (the page must show the same). */
    static Map<String, String> apiStatuses() throws Exception {
        Map<String, String> out = new HashMap<>();
        get("/v1/teams/local/agents").get("agents").forEach(a -> out.put(a.get("agentId").asText(),
                a.get("status").asText()));
        return out;
    }

    static String badgeOf(String agentId) {
        return driver.findElement(By.cssSelector("tr.agent[data-agent-id='" + agentId + "'] .badge")).getText();
    }

    static void screenshot(String name) throws Exception {
        screenshot(driver, name);
    }

    /** Kept under target/ for people to look at: {@code target/dashboard-<name>.png}. */
    static void screenshot(WebDriver browser, String name) throws Exception {
        Path target = Path.of("target", "dashboard-" + name + ".png");
        Files.createDirectories(target.getParent());
        Files.copy(((TakesScreenshot) browser).getScreenshotAs(OutputType.FILE).toPath(), target,
                StandardCopyOption.REPLACE_EXISTING);
    }

    @Test
    @Order(1)
    void wrongKey_showsAClearMessage() {
        signIn("local", "ll_not_a_real_key");
        WebElement error = waiting().until(ExpectedConditions.visibilityOfElementLocated(By.id("auth-error")));
        assertTrue(error.getText().contains("not accepted"), error.getText());
        assertTrue(driver.findElement(By.id("login")).isDisplayed());
    }

    @Test
    @Order(2)
    void teamView_showsEveryAgentWithItsBadge_theCounts_andTheFilter() throws Exception {
        signIn("local", local.adminKey());
        Map<String, String> statuses = apiStatuses();
        assertEquals("ready", statuses.get("ada"));
        assertEquals("working", statuses.get("bob"));
        assertEquals("offline", statuses.get("dee"));
        assertTrue(List.of("dead", "restarting", "dead_failed_revive").contains(statuses.get("cyd")), statuses.toString());
        waiting().until(d -> d.findElements(By.cssSelector("tr.agent")).size() == statuses.size());
        // The page's polling shows whatever the API says now; ask again until both agree (cyd may move on).
        waiting().until(d -> {
            try {
                Map<String, String> now = apiStatuses();
                return now.entrySet().stream().allMatch(e -> LABELS.get(e.getValue()).equals(badgeOf(e.getKey())));
            } catch (Exception e) {
                return false;
            }
        });
        // Trouble first: Cyd (dead, restarting or unrecoverable) heads the table.
        assertEquals("cyd", driver.findElement(By.cssSelector("tr.agent")).getAttribute("data-agent-id"));
        assertEquals("READY", badgeOf("ada"));
        assertEquals("WORKING", badgeOf("bob"));
        assertEquals("OFFLINE", badgeOf("dee"));
        assertEquals("task-7", driver.findElement(By.cssSelector("tr.agent[data-agent-id='bob'] .task")).getText());
        assertEquals("host-a", driver.findElement(By.cssSelector("tr.agent[data-agent-id='ada'] .host")).getText());

        assertEquals("4", driver.findElement(By.cssSelector(".count[data-status='all'] .n")).getText());
        assertEquals("1", driver.findElement(By.cssSelector(".count[data-status='ready'] .n")).getText());
        assertEquals("1", driver.findElement(By.cssSelector(".count[data-status='working'] .n")).getText());
        assertEquals("1", driver.findElement(By.cssSelector(".count[data-status='offline'] .n")).getText());

        new Select(driver.findElement(By.id("status-filter"))).selectByValue("working");
        waiting().until(d -> d.findElements(By.cssSelector("tr.agent")).size() == 1);
        assertEquals("bob", driver.findElement(By.cssSelector("tr.agent")).getAttribute("data-agent-id"));
        new Select(driver.findElement(By.id("status-filter"))).selectByValue("");
        waiting().until(d -> d.findElements(By.cssSelector("tr.agent")).size() == 4);

        // The events list shows what happened (joins, the claim, the failure).
        waiting().until(d -> !d.findElements(By.cssSelector("#events li[data-event-id]")).isEmpty());
        screenshot("team");
    }

    @Test
    @Order(3)
    void lastHeartbeatAge_countsUpWithoutAReload() {
        By age = By.cssSelector("tr.agent[data-agent-id='ada'] .age");
        int first = seconds(waiting().until(ExpectedConditions.visibilityOfElementLocated(age)).getText());
        waiting().until(d -> seconds(d.findElement(age).getText()) >= first + 2);
    }

    static int seconds(String text) {
        Matcher m = Pattern.compile("^(\\d+)s ago$").matcher(text.trim());
        assertTrue(m.find(), "age text: " + text);
        return Integer.parseInt(m.group(1));
    }

    @Test
    @Order(4)
    void agentPage_showsItsTransitions() throws Exception {
        waiting().until(d -> {
            d.findElement(By.cssSelector("tr.agent[data-agent-id='cyd']")).click();
            return true;
        });
        waiting().until(ExpectedConditions.visibilityOfElementLocated(By.id("agent-view")));
        int expected = get("/v1/teams/local/agents/cyd/transitions").get("transitions").size();
        assertTrue(expected >= 2, "joined, then failed");
        waiting().until(d -> d.findElements(By.cssSelector("tr.transition")).size() >= expected);
        String history = driver.findElement(By.id("transition-rows")).getText();
        assertTrue(history.contains("READY") && history.contains("DEAD"), history);
        assertTrue(history.contains("segfault"), history);
        assertTrue(driver.findElement(By.id("agent-title")).getText().contains("Cyd"));
        assertTrue(driver.findElement(By.id("agent-facts")).getText().contains("tester"));
        // Its own events (the failure among them), and no checkpoint: Cyd never saved one.
        waiting().until(d -> !d.findElements(By.cssSelector("#agent-events li[data-event-id^='local/cyd/status/']"))
                .isEmpty());
        Object others = ((JavascriptExecutor) driver).executeScript("return Array.prototype"
                + ".filter.call(document.querySelectorAll('#agent-events li[data-event-id]'), function (li) {"
                + " return li.getAttribute('data-event-id').indexOf('/cyd/') < 0; }).length;");
        assertEquals(0L, others, "only Cyd's events");
        assertEquals("No checkpoint saved.", driver.findElement(By.id("no-checkpoint")).getText());
        screenshot("agent");
        driver.findElement(By.id("back-link")).click();
        waiting().until(ExpectedConditions.visibilityOfElementLocated(By.id("team-view")));
    }

    /**
     * A dead agent with no host (Cyd) has no Revive… button, which could only end in 409 NO_HOST: the page says why
     * and what to do instead.
     */
    @Test
    @Order(5)
    void agentPage_ofADeadAgentWithoutAHost_showsWhyItCannotBeRevived_insteadOfTheButton() throws Exception {
        waiting().until(ExpectedConditions.visibilityOfElementLocated(By.id("team-view")));
        ((JavascriptExecutor) driver).executeScript("location.hash = '#agent/cyd';");
        waiting().until(d -> d.findElement(By.id("agent-title")).getText().contains("Cyd"));
        waiting().until(d -> {
            try {
                String status = get("/v1/teams/local/agents/cyd").get("status").asText();
                return !status.equals("dead") && !status.equals("dead_failed_revive")
                        || d.findElement(By.id("revive-unavailable")).isDisplayed();
            } catch (Exception e) {
                return false;
            }
        });
        String status = get("/v1/teams/local/agents/cyd").get("status").asText();
        if (status.equals("dead") || status.equals("dead_failed_revive")) {
            assertFalse(driver.findElement(By.id("revive-box")).isDisplayed(), "no Revive… for an agent with no host");
            String why = driver.findElement(By.id("revive-unavailable")).getText();
            assertTrue(why.startsWith("No revive here: Cyd has no host"), why);
            screenshot("agent-no-host");
        }
        ((JavascriptExecutor) driver).executeScript("location.hash = '';");
        waiting().until(ExpectedConditions.visibilityOfElementLocated(By.id("team-view")));
    }

    /**
     * A sign-in link carries the key in the fragment, which the browser never sends: the page signs in from it, then
     * clears it from the address bar and the history entry, and the key is in no URL the page can see.
     */
    @Test
    @Order(6)
    void signInLink_signsIn_andClearsTheKeyFromTheAddress() {
        driver.findElement(By.id("sign-out")).click();
        waiting().until(ExpectedConditions.visibilityOfElementLocated(By.id("login")));
        driver.get(base + "/#team=local&key=" + local.adminKey());
        waiting().until(ExpectedConditions.visibilityOfElementLocated(By.id("team-view")));
        waiting().until(d -> !d.findElements(By.cssSelector("tr.agent")).isEmpty());
        assertEquals(base + "/", driver.getCurrentUrl(), "the fragment is gone");
        Object seen = ((JavascriptExecutor) driver).executeScript(
                "return location.href + ' ' + document.referrer + ' ' + history.length;");
        assertFalse(String.valueOf(seen).contains(local.adminKey()), String.valueOf(seen));
        assertEquals("team local", driver.findElement(By.id("team-name")).getText());
    }

    /**
     * The team table fits a 1,280 px window with a crash loop's long restart marker and a long agent id: nothing
     * scrolls sideways (the window is 1,280 px wide, as {@link #chrome()} opens it).
     */
    @Test
    @Order(7)
    void teamTable_withALongRestartMarker_fitsA1280PxWindow() throws Exception {
        String id = "a-rather-long-agent-identifier-from-a-generated-fleet-name-0042";
        post("/v1/teams/local/agents", "{\"agentId\":\"" + id + "\",\"name\":\"A worker with a long descriptive "
                + "name\",\"role\":\"worker\",\"hostId\":\"build-host-with-a-long-name-eu-west-1\","
                + "\"staleAfterSeconds\":600}");
        post("/v1/teams/local/agents/" + id + "/join", "{}");
        post("/v1/teams/local/agents/" + id + "/heartbeat", "{\"status\":\"working\",\"stats\":"
                + "{\"restartsLastHour\":48}}");
        JavascriptExecutor js = (JavascriptExecutor) driver;
        assertEquals(1280L, js.executeScript("return window.outerWidth;"));
        waiting().until(d -> d.findElements(By.cssSelector("tr.agent[data-agent-id='" + id + "'] .marker.restarts"))
                .size() == 1);
        String marker = driver.findElement(By.cssSelector("tr.agent[data-agent-id='" + id + "'] .marker.restarts"))
                .getText();
        assertTrue(marker.contains("48 restarts") && marker.contains("by its host daemon"), marker);
        Object overflow = js.executeScript("var t = document.querySelector('table.agents');"
                + " return [document.documentElement.scrollWidth - document.documentElement.clientWidth,"
                + " Math.max(0, Math.ceil(t.getBoundingClientRect().right - t.parentElement.getBoundingClientRect().right)),"
                + " Math.max(0, t.scrollWidth - t.clientWidth)];");
        screenshot("team-1280");
        assertEquals(List.of(0L, 0L, 0L), overflow, "horizontal overflow (page, table past its box, table's own)");
    }

    @Test
    @Order(8)
    void apiUnreachable_showsTheBanner_andKeepsTheLastData() throws Exception {
        assertTrue(!driver.findElement(By.id("banner")).isDisplayed());
        int rows = driver.findElements(By.cssSelector("tr.agent")).size();
        int port = local.url().getPort();
        local.close();
        local = null;
        waiting().until(ExpectedConditions.visibilityOfElementLocated(By.id("banner")));
        assertTrue(driver.findElement(By.id("banner")).getText().contains("unreachable"));
        assertEquals(rows, driver.findElements(By.cssSelector("tr.agent")).size());
        screenshot("unreachable");

        // It answers again on the same port (a fresh Local, so this tab's key is now unknown): the banner
        // goes, and the page says the key was not accepted.
        local = LifelineLocal.start(new LifelineLocal.Options(port, null, TestStack.template(), Map.of(),
                Clock.systemUTC()));
        waiting().until(ExpectedConditions.invisibilityOfElementLocated(By.id("banner")));
        waiting().until(ExpectedConditions.visibilityOfElementLocated(By.id("auth-error")));
    }
}
