package io.lifeline.local.browser;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lifeline.auth.Scope;
import io.lifeline.local.http.FrontDoor;
import io.lifeline.local.stack.TestStack;
import io.lifeline.testing.MutableClock;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.openqa.selenium.By;
import org.openqa.selenium.JavascriptExecutor;
import org.openqa.selenium.StaleElementReferenceException;
import org.openqa.selenium.WebElement;
import org.openqa.selenium.chrome.ChromeDriver;
import org.openqa.selenium.support.ui.ExpectedConditions;
import org.openqa.selenium.support.ui.WebDriverWait;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;

/**
 * The dashboard following changes live, in the same headless Chromium as {@link DashboardTest}, over a
 * {@link TestStack} whose clock and sweep the test drives: an agent that stops heartbeating turns DEAD on
 * screen, its revive shows RESTARTING and then READY, all without a reload; the last-hour bar and the agent
 * page's recent events and checkpoint summary; the page on a phone-sized screen and in dark mode; the agent
 * page's revive button (refused for a read key, a revive for an admin key) and the team's pause banner.
 *
 * <p>The stack's clock starts 16 minutes before the browser's and the test moves it forward by about 14, so
 * what the page shows lies in the browser's last hour as a real fleet's would, and no deadline of an agent
 * that is alive is already past by the browser's clock (Ben, the one that dies, is stale after 8 minutes).
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
@Tag("browser")
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
        // Revive waits of 1, 2 and 4 s: Dan's automatic revive runs out of attempts in seconds of the clock.
        stack = TestStack.builder().clock(new MutableClock(start)).parameter("ReviveBaseWaitSeconds", "1").build();
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
        DashboardTest.close(driver, door, stack);
    }

    static void signIn(String key) {
        waiting().until(ExpectedConditions.elementToBeClickable(By.id("sign-out"))).click();
        waiting().until(ExpectedConditions.visibilityOfElementLocated(By.id("key-input"))).sendKeys(key);
        WebElement team = driver.findElement(By.id("team-input"));
        team.clear();
        team.sendKeys(TEAM);
        driver.findElement(By.id("login-button")).click();
    }

    static String text(String id) {
        return (String) driver.executeScript("var e = document.getElementById(arguments[0]);"
                + " return e ? e.textContent : null;", id);
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
        // PAUSED, not READY, with until when.
        waiting().until(d -> "PAUSED".equals(badgeOf("cal")));
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
        assertTrue(driver.findElement(By.id("revival-rows")).getText().contains("revived"),
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

    @Test
    @Order(6)
    void reviveButton_withAReadKey_showsThe403_andWritesNothing() throws Exception {
        // Dan goes quiet at once; his host never restarts him, so the automatic revive runs out of attempts.
        register("dan", "Dan", 1, 1);
        ok(stack.agent("join", "dan", null));
        for (int round = 0; round < 24 && !"dead".equals(status("dan")); round++) {
            stack.clock.advance(Duration.ofSeconds(5));
            stack.sweep();
        }
        assertEquals("dead", status("dan"));
        stack.pump.drain();
        for (int round = 0; round < 24 && !"dead_failed_revive".equals(status("dan")); round++) {
            stack.clock.advance(Duration.ofSeconds(2));
            stack.stepFunctions.runDue();
        }
        assertEquals("dead_failed_revive", status("dan"));
        stack.pump.drain();

        signIn(stack.key(TEAM, Scope.READ));
        driver.executeScript("location.hash = '#agent/dan';");
        waiting().until(d -> text("agent-title").contains("DEAD (UNRECOVERABLE)"));
        waiting().until(ExpectedConditions.visibilityOfElementLocated(By.id("revive-button")));
        DashboardTest.screenshot(driver, "revive-agent");

        Set<Map<String, AttributeValue>> before =
                new HashSet<>(stack.allItems());
        int executions = stack.stepFunctions.executions().size();
        driver.findElement(By.id("revive-button")).click();
        // Nothing is asked before the operator confirms.
        waiting().until(ExpectedConditions.visibilityOfElementLocated(By.id("revive-yes")));
        assertTrue(text("revive-question").contains("host-1") && text("revive-question").contains("Dan"),
                text("revive-question"));
        assertTrue(!driver.findElement(By.id("revive-result")).isDisplayed());
        assertTrue(!driver.findElement(By.id("revive-button")).isDisplayed());
        DashboardTest.screenshot(driver, "revive-confirm");
        driver.findElement(By.id("revive-yes")).click();

        waiting().until(d -> "notice error".equals(attribute("#revive-result", "class")));
        String message = text("revive-result");
        assertTrue(message.contains("403 INSUFFICIENT_SCOPE") && message.contains("admin key"), message);
        assertTrue(driver.findElement(By.id("revive-result")).isDisplayed());
        assertTrue(driver.findElement(By.id("agent-view")).isDisplayed(), "still signed in, on the agent page");
        assertEquals(before, new HashSet<>(stack.allItems()), "the refused revive wrote nothing");
        assertEquals(executions, stack.stepFunctions.executions().size(), "no revive started");
        assertEquals("dead_failed_revive", status("dan"));
        // The button is offered again (the agent is still dead) and the answer stays in view across polls.
        assertTrue(driver.findElement(By.id("revive-button")).isDisplayed());
        String polled = text("updated");
        waiting().until(d -> !polled.equals(text("updated")));
        assertEquals(message, text("revive-result"));
        assertTrue(notReloaded(), "the page was not reloaded");

        DashboardTest.screenshot(driver, "revive-403");
        driver.executeCdpCommand("Emulation.setDeviceMetricsOverride", Map.of("width", 390, "height", 844,
                "deviceScaleFactor", 1, "mobile", true));
        waiting().until(d -> noSidewaysScroll());
        DashboardTest.screenshot(driver, "phone-revive");
        driver.executeCdpCommand("Emulation.setEmulatedMedia", Map.of("features",
                List.of(Map.of("name", "prefers-color-scheme", "value", "dark"))));
        waiting().until(d -> brightness("body") < 60);
        DashboardTest.screenshot(driver, "phone-revive-dark");
        driver.executeCdpCommand("Emulation.clearDeviceMetricsOverride", Map.of());
        DashboardTest.screenshot(driver, "revive-dark");
        driver.executeCdpCommand("Emulation.setEmulatedMedia", Map.of("features",
                List.of(Map.of("name", "prefers-color-scheme", "value", "light"))));
    }

    @Test
    @Order(7)
    void reviveButton_startsARevive_andThePageShowsRestarting_withoutAReload() throws Exception {
        signIn(stack.adminKey);
        // The sign-in keeps the page: Dan's, with no answer of the read key's attempt.
        waiting().until(ExpectedConditions.visibilityOfElementLocated(By.id("revive-button")));
        assertTrue(!driver.findElement(By.id("revive-result")).isDisplayed());
        int executions = stack.stepFunctions.executions().size();
        driver.findElement(By.id("revive-button")).click();
        waiting().until(ExpectedConditions.visibilityOfElementLocated(By.id("revive-yes")));
        // Disabled from the click until the API answers, so one click starts one request.
        assertEquals(Boolean.TRUE, driver.executeScript("var b = document.getElementById('revive-yes');"
                + " b.click(); return b.disabled && document.getElementById('revive-no').disabled;"));

        waiting().until(d -> "notice ok".equals(attribute("#revive-result", "class")));
        assertTrue(text("revive-result").startsWith("Revive started (revive-acme-dan-"), text("revive-result"));
        assertEquals("restarting", status("dan"));
        assertEquals(executions + 1, stack.stepFunctions.executions().size());
        waiting().until(d -> text("agent-title").contains("RESTARTING"));
        // No longer dead: the button goes; the answer stays.
        waiting().until(ExpectedConditions.invisibilityOfElementLocated(By.id("revive-box")));
        assertTrue(driver.findElement(By.id("revive-result")).isDisplayed());
        assertTrue(notReloaded(), "the page was not reloaded");
        DashboardTest.screenshot(driver, "revive-started");
    }

    @Test
    @Order(8)
    void teamPauseBanner_showsWhileTheTeamIsPaused_goesOnResumeAndOnExpiry_withoutAReload() throws Exception {
        driver.findElement(By.id("back-link")).click();
        waiting().until(ExpectedConditions.visibilityOfElementLocated(By.id("team-view")));
        assertTrue(!driver.findElement(By.id("team-paused")).isDisplayed());

        ok(stack.team("pause-team", "{\"seconds\":3600,\"reason\":\"kernel upgrade\"}"));
        waiting().until(ExpectedConditions.visibilityOfElementLocated(By.id("team-paused")));
        String banner = text("team-paused");
        assertTrue(banner.startsWith("Team paused until ") && banner.contains("\u2014 kernel upgrade"), banner);
        DashboardTest.screenshot(driver, "team-paused");
        ok(stack.team("resume-team", null));
        waiting().until(ExpectedConditions.invisibilityOfElementLocated(By.id("team-paused")));

        // A pause that runs out: the API still reports it, the page hides it when the browser's clock passes it.
        Instant until = Instant.now().plusSeconds(6).truncatedTo(ChronoUnit.SECONDS);
        assertTrue(stack.clock.instant().isBefore(until), "the stack's clock is behind the browser's");
        ok(stack.team("pause-team", "{\"until\":\"" + until + "\"}"));
        waiting().until(ExpectedConditions.visibilityOfElementLocated(By.id("team-paused")));
        assertEquals("Team paused until " + driver.executeScript("return new Date(arguments[0]).toLocaleString();",
                until.toString()) + ". No agent is marked dead until then.", text("team-paused"));
        waiting().until(ExpectedConditions.invisibilityOfElementLocated(By.id("team-paused")));
        assertEquals(until.toString(), ok(stack.team("get-settings", null)).body().get("pausedUntil").asText());
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
