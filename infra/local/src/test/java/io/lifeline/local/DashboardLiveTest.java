package io.lifeline.local;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.openqa.selenium.By;
import org.openqa.selenium.JavascriptExecutor;
import org.openqa.selenium.StaleElementReferenceException;
import org.openqa.selenium.WebElement;
import org.openqa.selenium.chrome.ChromeDriver;
import org.openqa.selenium.support.ui.ExpectedConditions;
import org.openqa.selenium.support.ui.WebDriverWait;

/**
 * The dashboard following changes live, in the same headless Chromium as {@link DashboardTest}, over a
 * {@link TestStack} whose clock and sweep the test drives: an agent that stops heartbeating turns DEAD on
 * screen, its revive shows RESTARTING and then READY, all without a reload; the last-hour bar and the agent
 * page's recent events and checkpoint summary; the page on a phone-sized screen and in dark mode.
 *
 * <p>The stack's clock starts 16 minutes before the browser's and the test moves it forward by about 14, so
 * what the page shows lies in the browser's last hour as a real fleet's would, and no deadline of an agent
 * that is alive is already past by the browser's clock (Ben, the one that dies, is stale after 8 minutes).
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class DashboardLiveTest {
    static final Duration WAIT = Duration.ofSeconds(20);
    static final String TEAM = TestStack.TEAM;
    /** Set in the page after sign-in; a reload would lose it. */
    static final String MARKER = "window.lifelineTestMarker";

    static TestStack stack;
    static FrontDoor door;
    static ChromeDriver driver;
    static String base;

    @BeforeAll
    static void start() throws Exception {
        DashboardTest.assumeChromium();
        Instant start = Instant.now().minus(Duration.ofMinutes(16)).truncatedTo(ChronoUnit.SECONDS);
        stack = TestStack.builder().clock(new MutableClock(start)).build();
        door = new FrontDoor(stack.gateway, 0);
        base = "http://127.0.0.1:" + door.port();

        register("ann", "Ann", 600, 2);
        register("ben", "Ben", 480, 1);
        register("cal", "Cal", 600, 2);
        for (String id : List.of("ann", "ben", "cal")) {
            ok(stack.agent("join", id, null));
        }
        // Five minutes of history: Ann works on a task for three of them, Ben saves checkpoints as he goes, and
        // Cal flips between working and ready every second for 40 s of three, then works on (about 120 changes:
        // the bar reads two pages; each of those minutes shows WORKING, the status Cal held longest in it).
        for (int minute = 1; minute <= 5; minute++) {
            if (minute >= 2 && minute <= 4) {
                for (int second = 0; second < 40; second++) {
                    stack.clock.advance(Duration.ofSeconds(1));
                    beat("cal", second % 2 == 0 ? "{\"status\":\"working\"}" : "{\"status\":\"ready\"}");
                }
                stack.clock.advance(Duration.ofSeconds(1));
                beat("cal", "{\"status\":\"working\"}");
                stack.clock.advance(Duration.ofSeconds(19));
            } else {
                stack.clock.advance(Duration.ofMinutes(1));
            }
            if (minute == 1) {
                ok(stack.createTask("t-42"));
                ok(stack.task("claim", "t-42", "{\"agentId\":\"ann\"}"));
            }
            if (minute == 4) {
                ok(stack.task("complete", "t-42", "{\"agentId\":\"ann\",\"result\":\"done\"}"));
            }
            beat("ann", "{}");
            beat("cal", minute == 5 ? "{\"status\":\"ready\"}" : "{}");
            beat("ben", "{\"metadata\":{\"model\":\"m-1\",\"repo\":\"lifeline\"},\"stats\":{\"messagesProcessed\":"
                    + (10 * minute) + ",\"toolCallsExecuted\":" + (3 * minute) + ",\"uptime\":" + (60 * minute)
                    + "},\"checkpoint\":{\"step\":" + minute + ",\"plan\":\"migrate the schema\",\"files\":"
                    + "[\"a.sql\",\"b.sql\"]}}");
        }
        stack.pump.drain();
        driver = DashboardTest.chrome();
    }

    @AfterAll
    static void stop() {
        if (driver != null) {
            driver.quit();
        }
        if (door != null) {
            door.close();
        }
        if (stack != null) {
            stack.close();
        }
    }

    static void register(String id, String name, int staleAfterSeconds, int graceMisses) {
        ok(stack.team("register", "{\"agentId\":\"" + id + "\",\"name\":\"" + name + "\",\"role\":\"worker\","
                + "\"hostId\":\"host-1\",\"staleAfterSeconds\":" + staleAfterSeconds + ",\"graceMisses\":"
                + graceMisses + "}"));
    }

    static void beat(String id, String body) {
        ok(stack.heartbeat(id, body));
    }

    static TestStack.Reply ok(TestStack.Reply r) {
        assertTrue(r.status() / 100 == 2, () -> r.status() + " " + r.body());
        return r;
    }

    static String status(String id) {
        return ok(stack.agent("get-agent", id, null)).body().get("status").asText();
    }

    static WebDriverWait waiting() {
        return (WebDriverWait) new WebDriverWait(driver, WAIT).ignoring(StaleElementReferenceException.class);
    }

    // The page redraws its rows on every poll, so these read the DOM in one script, not through elements.
    static String badgeOf(String agentId) {
        return (String) driver.executeScript("var b = document.querySelector(\"tr.agent[data-agent-id='\" "
                + "+ arguments[0] + \"'] td .badge\"); return b ? b.textContent : '';", agentId);
    }

    /** The statuses of an agent's last-hour slots, oldest first. */
    @SuppressWarnings("unchecked")
    static List<String> slots(String agentId) {
        return (List<String>) driver.executeScript("return Array.prototype.map.call(document.querySelectorAll("
                + "\"tr.agent[data-agent-id='\" + arguments[0] + \"'] .hourbar .slot\"), "
                + "function (s) { return s.getAttribute('data-status'); });", agentId);
    }

    static String attribute(String selector, String name) {
        return (String) driver.executeScript("var e = document.querySelector(arguments[0]);"
                + " return e ? e.getAttribute(arguments[1]) : null;", selector, name);
    }

    static boolean notReloaded() {
        return Boolean.TRUE.equals(driver.executeScript("return " + MARKER + " === true;"));
    }

    @Test
    @Order(1)
    void lastHourBar_showsEachAgentsHistory_emptyBeforeItWasRegistered() {
        driver.get(base + "/");
        waiting().until(ExpectedConditions.visibilityOfElementLocated(By.id("key-input"))).sendKeys(stack.adminKey);
        WebElement team = driver.findElement(By.id("team-input"));
        team.clear();
        team.sendKeys(TEAM);
        driver.findElement(By.id("login-button")).click();
        waiting().until(d -> d.findElements(By.cssSelector("tr.agent")).size() == 3);
        driver.executeScript(MARKER + " = true;");

        // Ann: registered 16 minutes ago (the older slots are empty), ready, then working for three minutes
        // (each slot shows the status held longest in its minute).
        waiting().until(d -> slots("ann").contains("working"));
        List<String> ann = slots("ann");
        assertEquals(60, ann.size());
        assertEquals("none", ann.get(0), ann.toString());
        assertTrue(Math.abs(ann.lastIndexOf("none") - 43) <= 2, "registered about 16 minutes ago: " + ann);
        long working = ann.stream().filter("working"::equals).count();
        assertTrue(working >= 2 && working <= 4, "about three minutes: " + ann);
        assertTrue(ann.indexOf("ready") < ann.indexOf("working"), ann.toString());
        assertEquals("ready", ann.get(59), ann.toString());
        // Ann's claim is older than Cal's 120 changes: only a second page of the bar's events holds it.
        List<String> cal = slots("cal");
        assertTrue(cal.stream().filter("working"::equals).count() >= 2, cal.toString());
        for (String id : List.of("ann", "ben", "cal")) {
            assertTrue(!slots(id).contains("unknown"), id + ": " + slots(id));
        }
        String label = attribute("tr.agent[data-agent-id='ann'] .hourbar", "aria-label");
        assertTrue(label.contains("WORKING " + working + " min"), label);
    }

    @Test
    @Order(2)
    void agentThatStopsHeartbeating_turnsDeadOnScreen_withoutAReload() {
        assertEquals("READY", badgeOf("ben"));
        // Ben goes quiet; the others keep beating. Minutes pass, a sweep runs after each (bounded).
        for (int round = 0; round < 12 && !"dead".equals(status("ben")); round++) {
            stack.clock.advance(Duration.ofMinutes(1));
            beat("ann", "{}");
            beat("cal", "{}");
            stack.sweep();
        }
        assertEquals("dead", status("ben"));

        waiting().until(d -> "DEAD".equals(badgeOf("ben")));
        assertEquals("dead", attribute("tr.agent[data-agent-id='ben']", "data-status"));
        assertEquals("dead", slots("ben").get(59), "the bar's newest slot follows the status at once");
        waiting().until(d -> "1".equals(d.findElement(By.cssSelector(".count[data-status='dead'] .n")).getText()));
        assertTrue(notReloaded(), "the page was not reloaded");
    }

    @Test
    @Order(3)
    void revive_showsRestarting_thenReady_withoutAReload() throws Exception {
        // The outbox publishes the death; the template's rule starts the revive, whose first step asks host-1.
        stack.pump.drain();
        assertEquals("restarting", status("ben"));
        waiting().until(d -> "RESTARTING".equals(badgeOf("ben")));
        // The death shows in the live events list as an alert.
        waiting().until(d -> !d.findElements(By.cssSelector("#events li.alert[data-event-id='acme/ben/status/2']"))
                .isEmpty());

        ok(stack.agent("join", "ben", null));
        waiting().until(d -> "READY".equals(badgeOf("ben")));
        stack.clock.advance(Duration.ofSeconds(30));
        stack.stepFunctions.runDue();
        stack.pump.drain();
        assertTrue(notReloaded(), "the page was not reloaded");
        // Within ten seconds the bar reads the new history: Ben's minute of death shows DEAD (trouble shows
        // even when it lasted a moment), and he is ready again now.
        waiting().until(d -> slots("ben").contains("dead"));
        assertEquals("ready", slots("ben").get(59));

        // A paused agent has no deadline counting down: the sweep will not mark it dead until the pause ends.
        ok(stack.agent("pause-agent", "cal", "{\"seconds\":600,\"reason\":\"kernel upgrade\"}"));
        waiting().until(d -> d.findElement(By.cssSelector("tr.agent[data-agent-id='cal'] .deadline")).getText()
                .startsWith("paused until "));
        DashboardTest.screenshot(driver, "live-team");
    }

    @Test
    @Order(4)
    void agentPage_showsHistory_revive_recentEvents_stats_metadata_andACheckpointSummary() throws Exception {
        waiting().until(d -> {
            d.findElement(By.cssSelector("tr.agent[data-agent-id='ben']")).click();
            return true;
        });
        waiting().until(ExpectedConditions.visibilityOfElementLocated(By.id("agent-view")));
        waiting().until(d -> d.findElements(By.cssSelector("tr.transition")).size() >= 4);
        String history = driver.findElement(By.id("transition-rows")).getText();
        assertTrue(history.contains("heartbeat_expired") && history.contains("restart_initiated"), history);

        waiting().until(d -> !d.findElements(By.cssSelector("tr.revival")).isEmpty());
        assertTrue(driver.findElement(By.id("revival-rows")).getText().contains("alive"),
                driver.findElement(By.id("revival-rows")).getText());

        waiting().until(d -> !d.findElements(By.cssSelector("#agent-events li[data-type='AgentRestartRequested']"))
                .isEmpty());
        @SuppressWarnings("unchecked")
        List<String> types = (List<String>) driver.executeScript("return Array.prototype.map.call("
                + "document.querySelectorAll('#agent-events li[data-event-id]'), "
                + "function (li) { return li.getAttribute('data-event-id'); });");
        assertTrue(types.stream().allMatch(id -> id.contains("/ben/") || id.contains("host-1")), types.toString());
        assertTrue(types.contains("acme/ben/status/2"), types.toString());

        String checkpoint = driver.findElement(By.id("agent-checkpoint")).getText();
        assertTrue(checkpoint.contains("step, plan, files"), checkpoint);
        assertTrue(checkpoint.contains(" B"), checkpoint);
        assertTrue(checkpoint.contains("not offered (Session still active)"), checkpoint);
        assertTrue(!checkpoint.contains("migrate the schema"), "a summary, not the contents: " + checkpoint);
        String stats = driver.findElement(By.id("agent-stats")).getText();
        assertTrue(stats.matches("(?s)Messages\\s+50\\s+Tool calls\\s+15\\s+Uptime\\s+5m.*"), stats);
        assertTrue(driver.findElement(By.id("agent-metadata")).getText().contains("lifeline"));
        assertTrue(notReloaded(), "the page was not reloaded");
        DashboardTest.screenshot(driver, "live-agent");
    }

    @Test
    @Order(5)
    void phoneSizedScreen_andDarkMode_fitAndReadWell() throws Exception {
        driver.executeCdpCommand("Emulation.setDeviceMetricsOverride", Map.of("width", 390, "height", 844,
                "deviceScaleFactor", 1, "mobile", true));
        waiting().until(d -> noSidewaysScroll());
        DashboardTest.screenshot(driver, "phone-agent");
        driver.findElement(By.id("back-link")).click();
        waiting().until(ExpectedConditions.visibilityOfElementLocated(By.id("team-view")));
        waiting().until(d -> noSidewaysScroll());
        DashboardTest.screenshot(driver, "phone-team");

        driver.executeCdpCommand("Emulation.setEmulatedMedia", Map.of("features",
                List.of(Map.of("name", "prefers-color-scheme", "value", "dark"))));
        waiting().until(d -> brightness("body") < 60);
        DashboardTest.screenshot(driver, "phone-team-dark");
        driver.executeCdpCommand("Emulation.clearDeviceMetricsOverride", Map.of());
        DashboardTest.screenshot(driver, "team-dark");
        assertTrue(brightness("tr.agent td") > 150, "light text on dark");
        driver.executeCdpCommand("Emulation.setEmulatedMedia", Map.of("features",
                List.of(Map.of("name", "prefers-color-scheme", "value", "light"))));
        assertTrue(notReloaded(), "the page was not reloaded");
    }

    boolean noSidewaysScroll() {
        return Boolean.TRUE.equals(((JavascriptExecutor) driver).executeScript(
                "return document.documentElement.scrollWidth <= window.innerWidth;"));
    }

    /** Mean of the R, G and B of the first match's background (body) or text colour (anything else). */
    static double brightness(String selector) {
        Object rgb = driver.executeScript("var e = document.querySelector(arguments[0]);"
                + "var c = getComputedStyle(e)[arguments[0] === 'body' ? 'backgroundColor' : 'color'];"
                + "var m = c.match(/\\d+/g); return (+m[0] + +m[1] + +m[2]) / 3;", selector);
        return ((Number) rgb).doubleValue();
    }
}
