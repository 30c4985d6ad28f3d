package io.lifeline.local.browser;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.lifeline.local.http.FrontDoor;
import io.lifeline.local.stack.TestStack;
import io.lifeline.testing.MutableClock;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.Predicate;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.Timeout;
import org.openqa.selenium.By;
import org.openqa.selenium.Keys;
import org.openqa.selenium.StaleElementReferenceException;
import org.openqa.selenium.WebElement;
import org.openqa.selenium.chrome.ChromeDriver;
import org.openqa.selenium.interactions.Actions;
import org.openqa.selenium.support.ui.ExpectedConditions;
import org.openqa.selenium.support.ui.WebDriverWait;

/**
 * The dashboard for every operator, in the same headless Chromium as {@link DashboardTest}, over a
 * {@link TestStack} whose clock, sweep and outbox the test drives:
 * <ul>
 *   <li>axe-core (npm, {@code infra/local/package.json}; evaluated in the page, since the CSP admits no injected
 *       script tag) finds no WCAG 2.1 A or AA violation on any view (sign-in, team, an agent's page, the revive
 *       confirmation) in light mode, dark mode and on a phone-sized screen;</li>
 *   <li>triage: trouble first (dead, unrecoverable, restarting, flapping, then the rest), both deaths filled,
 *       PAUSED with until when, restart and error markers, an alerts-only feed, the tab's title counting the
 *       agents that need attention;</li>
 *   <li>a death is announced in a polite live region, and rows are updated in place (the focus survives);</li>
 *   <li>keyboard only: sign in, open a dead agent, Escape cancels the confirmation, revive it, back to the team
 *       view, with the focus on each view's heading.</li>
 * </ul>
 * Skipped when the browser or its driver is missing; when axe-core is not installed it is skipped too, except
 * in CI ({@code CI} set), where {@code .ci/run} installs it and its absence fails.
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
@Timeout(300)
@Tag("browser")
class DashboardAccessTest {
    static final Duration WAIT = Duration.ofSeconds(20);
    static final String TEAM = TestStack.TEAM;
    static final ObjectMapper JSON = new ObjectMapper();
    /** The rule sets axe runs: WCAG 2.0 and 2.1, levels A and AA. */
    static final String TAGS = "['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa']";

    static TestStack stack;
    static FrontDoor door;
    static ChromeDriver driver;
    static String base;
    static String axe;

    @BeforeAll
    static void start() throws Exception {
        DashboardTest.assumeChromium();
        axe = axeSource();
        // The stack's clock a little behind the browser's, so that the history lies in the browser's last hour.
        Instant start = Instant.now().minus(Duration.ofMinutes(10)).truncatedTo(ChronoUnit.SECONDS);
        stack = TestStack.builder().clock(new MutableClock(start)).parameter("ReviveBaseWaitSeconds", "1").build();
        door = new FrontDoor(stack.gateway, 0);
        base = "http://127.0.0.1:" + door.port();

        register("ann", "Ann", "host-1");
        register("bob", "Bob", "host-1");
        register("cal", "Cal", "host-1");
        register("dan", "Dan", "host-1");
        register("eve", "Eve", "host-gone");
        register("gus", "Gus", "host-1");
        register("hal", "Hal", "host-1");
        for (String id : List.of("ann", "bob", "dan", "eve", "gus", "hal")) {
            ok(stack.agent("join", id, null));
        }
        // Bob works on a task and hit his context limit; Gus is paused for maintenance.
        ok(stack.createTask("t-1"));
        ok(stack.task("claim", "t-1", "{\"agentId\":\"bob\"}"));
        ok(stack.agent("errors", "bob", "{\"message\":\"prompt is too long: the context window is full\"}"));
        ok(stack.agent("pause-agent", "gus", "{\"seconds\":3600,\"reason\":\"kernel upgrade\"}"));
        // Hal crashes three times, and each time its host brings it back: a crash loop, flapping.
        for (int crash = 0; crash < 3; crash++) {
            stack.clock.advance(Duration.ofSeconds(20));
            ok(stack.agent("fail", "hal", "{\"reason\":\"exited with status 3\"}"));
            stack.pump.drain();
            assertEquals("restarting", stack.status("hal"));
            stack.clock.advance(Duration.ofSeconds(5));
            ok(stack.agent("join", "hal", null));
        }
        // Eve's host is gone: her revive runs out of attempts and she ends unrecoverable.
        ok(stack.agent("fail", "eve", "{\"reason\":\"out of memory\"}"));
        stack.pump.drain();
        for (int round = 0; round < 24 && !"dead_failed_revive".equals(stack.status("eve")); round++) {
            stack.clock.advance(Duration.ofSeconds(2));
            stack.stepFunctions.runDue();
        }
        assertEquals("dead_failed_revive", stack.status("eve"));
        stack.pump.drain();
        // Dan dies last, and no revive starts (the outbox is not drained again): he stays DEAD.
        ok(stack.agent("fail", "dan", "{\"reason\":\"segfault\"}"));
        assertEquals("dead", stack.status("dan"));
        driver = DashboardTest.chrome();
        driver.manage().timeouts().scriptTimeout(Duration.ofSeconds(60));
    }

    /** axe.min.js from infra/local/node_modules (npm ci --prefix infra/local). */
    static String axeSource() throws Exception {
        Path file = Path.of("node_modules", "axe-core", "axe.min.js");
        if (!Files.isReadable(file)) {
            String why = "axe-core is not installed (" + file.toAbsolutePath() + "): run npm ci --prefix infra/local";
            if (System.getenv("CI") != null) {
                fail(why);
            }
            Assumptions.assumeTrue(false, why);
        }
        return Files.readString(file, StandardCharsets.UTF_8);
    }

    @AfterAll
    static void stop() {
        DashboardTest.close(driver, door, stack);
    }

    static void register(String id, String name, String host) {
        ok(stack.team("register", "{\"agentId\":\"" + id + "\",\"name\":\"" + name + "\",\"role\":\"worker\","
                + "\"hostId\":\"" + host + "\",\"staleAfterSeconds\":3600}"));
    }

    static TestStack.Reply ok(TestStack.Reply r) {
        assertTrue(r.status() / 100 == 2, () -> r.status() + " " + r.body());
        return r;
    }

    static WebDriverWait waiting() {
        return (WebDriverWait) new WebDriverWait(driver, WAIT).ignoring(StaleElementReferenceException.class)
                .withMessage(() -> "page: title " + driver.getTitle() + ", focus " + focused() + ", rows " + rowOrder()
                        + ", announcer " + text("announcer") + ", auth-error " + text("auth-error"));
    }

    static Object js(String script, Object... args) {
        return driver.executeScript(script, args);
    }

    static String text(String id) {
        return (String) js("var e = document.getElementById(arguments[0]); return e ? e.textContent : null;", id);
    }

    @SuppressWarnings("unchecked")
    static List<String> rowOrder() {
        return (List<String>) js("return Array.prototype.map.call(document.querySelectorAll('#agent-rows tr.agent'),"
                + " function (r) { return r.getAttribute('data-agent-id'); });");
    }

    static String badgeOf(String agentId) {
        return (String) js("var b = document.querySelector(\"tr.agent[data-agent-id='\" + arguments[0] + \"'] td"
                + " .badge\"); return b ? b.textContent + '|' + b.getAttribute('data-status') : '';", agentId);
    }

    /** The id, or else the tag, of the focused element. */
    static String focused() {
        return (String) js("var e = document.activeElement; return e.id || e.getAttribute('href') || e.tagName;");
    }

    // ---- axe ----------------------------------------------------------------------------------------------

    /** Runs axe-core in the page; fails with every WCAG 2.1 A/AA violation it finds, by rule and element. */
    static void assertNoViolations(String view) throws Exception {
        if (!Boolean.TRUE.equals(js("return typeof window.axe === 'object';"))) {
            js(axe + "\n;window.axe = axe;");
        }
        String result = (String) driver.executeAsyncScript("var done = arguments[arguments.length - 1];"
                + "axe.run(document, { runOnly: { type: 'tag', values: " + TAGS + " } }).then(function (r) {"
                + "  done(JSON.stringify({ passes: r.passes.length, violations: r.violations.map(function (v) {"
                + "    return { id: v.id, impact: v.impact, nodes: v.nodes.map(function (n) {"
                + "      return n.target.join(' ') + ': ' + n.failureSummary; }) }; }) }));"
                + "}, function (e) { done(JSON.stringify({ error: String(e) })); });");
        JsonNode r = JSON.readTree(result);
        assertFalse(r.has("error"), view + ": axe failed: " + result);
        assertTrue(r.get("passes").asInt() > 5, view + ": axe checked almost nothing: " + result);
        List<String> found = new ArrayList<>();
        r.get("violations").forEach(v -> found.add(v.get("id").asText() + " (" + v.get("impact").asText() + "): "
                + v.get("nodes")));
        assertTrue(found.isEmpty(), view + ": WCAG 2.1 A/AA violations:\n" + String.join("\n", found));
    }

    /** The view in light mode, dark mode and on a 390x844 phone screen (dark too), each checked and kept. */
    static void assertAccessibleInEveryTheme(String view, Predicate<ChromeDriver> ready) throws Exception {
        try {
            for (String mode : List.of("light", "dark")) {
                media(mode);
                for (boolean phone : List.of(false, true)) {
                    if (phone) {
                        driver.executeCdpCommand("Emulation.setDeviceMetricsOverride", Map.of("width", 390,
                                "height", 844, "deviceScaleFactor", 1, "mobile", true));
                    } else {
                        driver.executeCdpCommand("Emulation.clearDeviceMetricsOverride", Map.of());
                    }
                    waiting().until(d -> ready.test(driver));
                    String name = view + (phone ? "-phone" : "") + ("dark".equals(mode) ? "-dark" : "");
                    assertNoViolations(name);
                    DashboardTest.screenshot(driver, "a11y-" + name);
                }
            }
        } finally {
            driver.executeCdpCommand("Emulation.clearDeviceMetricsOverride", Map.of());
            media("light");
        }
    }

    static void media(String scheme) {
        driver.executeCdpCommand("Emulation.setEmulatedMedia", Map.of("features",
                List.of(Map.of("name", "prefers-color-scheme", "value", scheme))));
    }

    static void signIn(String key) {
        driver.get(base + "/");
        waiting().until(ExpectedConditions.visibilityOfElementLocated(By.id("key-input"))).sendKeys(key);
        WebElement team = driver.findElement(By.id("team-input"));
        team.clear();
        team.sendKeys(TEAM);
        driver.findElement(By.id("login-button")).click();
        waiting().until(d -> d.findElements(By.cssSelector("tr.agent")).size() == 7);
    }

    /** The views, checked in their order on the one browser and stack the class starts. */
    @Nested
    @TestMethodOrder(MethodOrderer.OrderAnnotation.class)
    class Views {
        @Test
        @Order(1)
        void signInView_hasNoAxeViolation_inLightDarkAndPhone() throws Exception {
            driver.get(base + "/");
            waiting().until(ExpectedConditions.visibilityOfElementLocated(By.id("key-input")));
            assertEquals("Sign in \u00b7 Lifeline", driver.getTitle());
            assertEquals("login-title", focused(), "the view's heading has the focus");
            assertAccessibleInEveryTheme("login", d -> d.findElement(By.id("login")).isDisplayed());
            // Its favicon is served (no 404 on every load).
            assertEquals(Boolean.TRUE, js("return fetch('/dashboard/favicon.svg').then(function (r) {"
                    + " return r.ok && r.headers.get('content-type') === 'image/svg+xml'; });"));
        }

        @Test
        @Order(2)
        void teamView_listsTroubleFirst_withFilledDeaths_paused_markers_andATitleThatCounts() throws Exception {
            signIn(stack.adminKey);
            // Dead, unrecoverable, (no one restarting), flapping Hal, then the rest by name.
            waiting().until(d -> rowOrder().equals(List.of("dan", "eve", "hal", "ann", "bob", "cal", "gus")));
            assertEquals("DEAD|dead", badgeOf("dan"));
            assertEquals("DEAD (UNRECOVERABLE)|dead_failed_revive", badgeOf("eve"));
            assertEquals("OFFLINE|offline", badgeOf("cal"));
            assertEquals("PAUSED|paused", badgeOf("gus"));
            assertTrue(text("agent-rows").contains("until "), "PAUSED says until when");
            // Both deaths are filled (white on red), OFFLINE is grey, not the warning amber of RESTARTING.
            assertEquals(js("return getComputedStyle(document.querySelector(\"tr.agent[data-agent-id='dan'] .badge\"))"
                    + ".backgroundColor;"), js("return getComputedStyle(document.querySelector(\"tr.agent[data-agent-id="
                    + "'eve'] .badge\")).backgroundColor;"));
            assertEquals("rgb(255, 255, 255)", js("return getComputedStyle(document.querySelector(\"tr.agent"
                    + "[data-agent-id='dan'] .badge\")).color;"));
            Object offline = js("var c = getComputedStyle(document.querySelector(\"tr.agent[data-agent-id='cal'] .badge\"))"
                    + ".color.match(/\\d+/g); return Math.max(+c[0], +c[1], +c[2]) - Math.min(+c[0], +c[1], +c[2]);");
            assertTrue(((Number) offline).intValue() < 30, "OFFLINE is grey: " + offline);
            // Hal's three restarts show on his row (the bar reads the hour's changes every 10 s), Bob's error on his.
            waiting().until(d -> text("agent-rows").contains("3 restarts in the last hour (flapping)"));
            assertTrue(text("agent-rows").contains("1 context-limit error in the last hour"), text("agent-rows"));
            // Every agent is a real link with its own URL; the count tiles are buttons with a pressed state.
            assertEquals(7L, js("return document.querySelectorAll(\"#agent-rows a[href^='#agent/']\").length;"));
            assertEquals("true", js("return document.querySelector(\"#counts button[data-status='all']\")"
                    + ".getAttribute('aria-pressed');"));
            assertEquals("1 dead, 1 unrecoverable \u00b7 Agents \u00b7 Lifeline", driver.getTitle());
            assertEquals("team-title", focused(), "after sign-in the focus is on the view's heading");

            driver.findElement(By.cssSelector("#counts button[data-status='dead']")).click();
            waiting().until(d -> rowOrder().equals(List.of("dan")));
            assertEquals("true", js("return document.querySelector(\"#counts button[data-status='dead']\")"
                    + ".getAttribute('aria-pressed');"));
            driver.findElement(By.cssSelector("#counts button[data-status='all']")).click();
            waiting().until(d -> rowOrder().size() == 7);

            assertAccessibleInEveryTheme("team", d -> rowOrder().size() == 7);
        }

        @Test
        @Order(3)
        void alertsOnly_showsDeathsOfTheLastHour_withoutRoutineEvents() {
            waiting().until(d -> !d.findElements(By.cssSelector("#events li[data-type='TasksReassigned'],"
                    + " #events li[data-type='AgentStatusChanged']:not(.alert)")).isEmpty());
            driver.findElement(By.id("alerts-only")).click();
            // Eve's and Hal's deaths (published by the outbox): alerts, and nothing else.
            waiting().until(d -> "alerts".equals(js("return document.getElementById('events').getAttribute('data-mode');")));
            waiting().until(d -> !d.findElements(By.cssSelector("#events li.alert[data-event-id^='acme/eve/']")).isEmpty());
            assertEquals(0L, js("return document.querySelectorAll('#events li[data-event-id]:not(.alert)').length;"));
            assertTrue((Long) js("return document.querySelectorAll(\"#events li.alert[data-event-id^='acme/hal/']\")"
                    + ".length;") >= 3, "each of Hal's three deaths");
            driver.findElement(By.id("alerts-only")).click();
            waiting().until(d -> "all".equals(js("return document.getElementById('events').getAttribute('data-mode');")));
            waiting().until(d -> (Long) js("return document.querySelectorAll('#events li[data-event-id]:not(.alert)')"
                    + ".length;") > 0);
        }

        @Test
        @Order(4)
        void agentPage_andReviveConfirmation_haveNoAxeViolation_andEscapeCancels() throws Exception {
            js("location.hash = '#agent/eve';");
            waiting().until(d -> text("agent-title").contains("DEAD (UNRECOVERABLE)"));
            waiting().until(ExpectedConditions.visibilityOfElementLocated(By.id("revive-button")));
            waiting().until(d -> !d.findElements(By.cssSelector("tr.transition")).isEmpty());
            waiting().until(d -> "agent-title".equals(focused()));
            assertEquals("1 dead, 1 unrecoverable \u00b7 Eve (DEAD (UNRECOVERABLE)) \u00b7 Lifeline", driver.getTitle());
            assertAccessibleInEveryTheme("agent", d -> d.findElement(By.id("agent-view")).isDisplayed());

            driver.findElement(By.id("revive-button")).click();
            waiting().until(ExpectedConditions.visibilityOfElementLocated(By.id("revive-yes")));
            assertEquals("revive-no", focused(), "the confirmation opens on Cancel");
            assertAccessibleInEveryTheme("revive-confirm", d -> d.findElement(By.id("revive-yes")).isDisplayed());
            press(Keys.ESCAPE);
            waiting().until(ExpectedConditions.invisibilityOfElementLocated(By.id("revive-confirm")));
            assertEquals("revive-button", focused(), "Escape cancels and gives the focus back to Revive…");
            assertEquals("dead_failed_revive", stack.status("eve"), "nothing was asked");
            driver.findElement(By.id("back-link")).click();
            waiting().until(ExpectedConditions.visibilityOfElementLocated(By.id("team-view")));
            waiting().until(d -> "team-title".equals(focused()));
        }

        @Test
        @Order(5)
        void aDeath_isAnnouncedPolitely_andRowsAreUpdatedInPlace_keepingTheFocus() {
            register("fay", "Fay", "host-1");
            ok(stack.agent("join", "fay", null));
            waiting().until(d -> rowOrder().contains("fay"));
            // Marks on the live rows and the focus on Ann's link: a poll that rebuilt the table would lose both.
            js("document.querySelector(\"tr.agent[data-agent-id='ann']\").lifelineKept = true;"
                    + "document.querySelector(\"tr.agent[data-agent-id='fay']\").lifelineKept = true;"
                    + "document.querySelector(\"tr.agent[data-agent-id='ann'] a\").focus();");
            assertEquals("polite", js("return document.getElementById('announcer').getAttribute('aria-live');"));
            String before = text("announcer");

            ok(stack.agent("fail", "fay", "{\"reason\":\"segfault\"}"));
            waiting().until(d -> text("announcer").startsWith("Fay died."));
            assertFalse(text("announcer").equals(before));
            // One short message, not the table.
            assertFalse(text("announcer").contains("Ann"), text("announcer"));
            waiting().until(d -> rowOrder().subList(0, 2).equals(List.of("dan", "fay")));
            assertEquals(Boolean.TRUE, js("return document.querySelector(\"tr.agent[data-agent-id='ann']\").lifelineKept"
                    + " === true && document.querySelector(\"tr.agent[data-agent-id='fay']\").lifelineKept === true;"));
            assertEquals("#agent/ann", focused(), "the focus survived the poll");
            assertEquals("2 dead, 1 unrecoverable \u00b7 Agents \u00b7 Lifeline", driver.getTitle());

            // Her recovery is announced too.
            ok(stack.agent("join", "fay", null));
            waiting().until(d -> text("announcer").startsWith("Fay recovered."));
        }

        @Test
        @Order(6)
        void keyboardOnly_signsIn_opensADeadAgent_revivesIt_andReturns() throws Exception {
            js("sessionStorage.clear();");
            driver.get(base + "/");
            waiting().until(ExpectedConditions.visibilityOfElementLocated(By.id("key-input")));
            waiting().until(d -> "login-title".equals(focused()));
            tabTo("team-input");
            // Tab selects the field's text ("local"), so typing replaces it.
            press(TEAM);
            tabTo("key-input");
            press(stack.adminKey, Keys.ENTER);
            waiting().until(d -> rowOrder().size() == 8);
            waiting().until(d -> "team-title".equals(focused()));

            // Dan is first (trouble first): Tab reaches his link after the header, the count tiles and the filter.
            tabTo("#agent/dan");
            press(Keys.ENTER);
            waiting().until(d -> text("agent-title").contains("Dan"));
            waiting().until(d -> "agent-title".equals(focused()));
            tabTo("revive-button");
            press(Keys.ENTER);
            waiting().until(d -> "revive-no".equals(focused()));
            shiftTab();
            assertEquals("revive-yes", focused());
            press(Keys.ENTER);
            waiting().until(d -> "notice ok".equals(js("return document.getElementById('revive-result').className;")));
            assertEquals("revive-result", focused(), "the answer takes the focus from the closed confirmation");
            assertEquals("restarting", stack.status("dan"));
            waiting().until(d -> text("agent-title").contains("RESTARTING"));
            DashboardTest.screenshot(driver, "a11y-keyboard-revived");

            tabTo("back-link", true);
            press(Keys.ENTER);
            waiting().until(ExpectedConditions.visibilityOfElementLocated(By.id("team-view")));
            waiting().until(d -> "team-title".equals(focused()));
            waiting().until(d -> badgeOf("dan").equals("RESTARTING|restarting"));
            assertTrue(rowOrder().indexOf("dan") < rowOrder().indexOf("ann"), "restarting is still trouble");
        }

        /**
         * A dead agent with no host: no Revive… (it could only end in 409 NO_HOST); the page says why and what to do, and
         * that line passes axe in every theme.
         */
        @Test
        @Order(7)
        void deadAgentWithoutAHost_showsWhyItCannotBeRevived_withNoAxeViolation() throws Exception {
            ok(stack.team("register", "{\"agentId\":\"ivy\",\"name\":\"Ivy\",\"role\":\"worker\"}"));
            ok(stack.agent("join", "ivy", null));
            ok(stack.agent("fail", "ivy", "{\"reason\":\"segfault\"}"));
            assertEquals("dead", stack.status("ivy"));
            js("location.hash = '#agent/ivy';");
            waiting().until(d -> text("agent-title").contains("Ivy"));
            waiting().until(ExpectedConditions.visibilityOfElementLocated(By.id("revive-unavailable")));
            assertFalse(driver.findElement(By.id("revive-box")).isDisplayed(), "no Revive… without a host");
            assertTrue(text("revive-unavailable").startsWith("No revive here: Ivy has no host"),
                    text("revive-unavailable"));
            assertAccessibleInEveryTheme("agent-no-host", d -> d.findElement(By.id("revive-unavailable")).isDisplayed());
            assertEquals("dead", stack.status("ivy"), "nothing was asked");
        }
    }

    /** Keys typed into whatever has the focus, as a keyboard does (no element is clicked or targeted). */
    static void press(CharSequence... keys) {
        new Actions(driver).sendKeys(keys).perform();
    }

    static void shiftTab() {
        new Actions(driver).keyDown(Keys.SHIFT).sendKeys(Keys.TAB).keyUp(Keys.SHIFT).perform();
    }

    static void tabTo(String target) {
        tabTo(target, false);
    }

    /** Presses Tab (or Shift+Tab) until {@code target} (an id or a link's href) has the focus: at most 60 times. */
    static void tabTo(String target, boolean backwards) {
        List<String> seen = new ArrayList<>();
        for (int i = 0; i < 60; i++) {
            if (target.equals(focused())) {
                return;
            }
            seen.add(focused());
            if (backwards) {
                shiftTab();
            } else {
                press(Keys.TAB);
            }
        }
        fail("the keyboard never reached " + target + "; the focus went through " + seen);
    }
}
