package io.lifeline.local.browser;

import static io.lifeline.local.stack.TestStack.ok;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lifeline.agent.SweepPlan;
import io.lifeline.auth.Scope;
import io.lifeline.local.http.FrontDoor;
import io.lifeline.local.stack.TestStack;
import io.lifeline.store.team.TeamStore;
import io.lifeline.testing.MutableClock;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.openqa.selenium.By;
import org.openqa.selenium.StaleElementReferenceException;
import org.openqa.selenium.WebElement;
import org.openqa.selenium.chrome.ChromeDriver;
import org.openqa.selenium.support.ui.ExpectedConditions;
import org.openqa.selenium.support.ui.WebDriverWait;

/**
 * The self-preservation banner in the same headless Chromium as {@link DashboardTest}, over a {@link TestStack} whose
 * clock and sweep the test drives: 8 of a team's 10 agents, each beating from an address of its own, go silent (a
 * deaf Lifeline, not a dead box): the sweep holds them, and the team view shows how many, since when and why, with
 * the release; a read key's release is refused in the banner, an admin's releases the hold (the banner says so).
 */
@Tag("browser")
class HoldBannerTest {
    static final Duration WAIT = Duration.ofSeconds(20);
    static final String TEAM = TestStack.TEAM;

    static TestStack stack;
    static FrontDoor door;
    static ChromeDriver driver;
    static String base;

    @BeforeAll
    static void start() throws Exception {
        DashboardTest.assumeChromium();
        Instant start = Instant.now().minus(Duration.ofMinutes(3)).truncatedTo(ChronoUnit.SECONDS);
        stack = TestStack.builder().clock(new MutableClock(start)).build();
        door = new FrontDoor(stack.gateway, 0);
        base = "http://127.0.0.1:" + door.port();
        for (int i = 1; i <= 10; i++) {
            ok(stack.team("register", "{\"agentId\":\"w" + i + "\",\"name\":\"Worker " + i + "\",\"role\":\"worker\"}"));
            ok(stack.agent("join", "w" + i, null));
        }
        stack.clock.advance(Duration.ofSeconds(10));
        for (int i = 1; i <= 10; i++) {
            beat(i);
        }
        // Eight go silent, each from its own address; two keep beating.
        for (int sec = 75; sec <= 120; sec += 15) {
            stack.clock.set(start.plusSeconds(sec));
            beat(9);
            beat(10);
            assertEquals(List.of(), stack.sweep(), "held at " + sec + " s");
        }
        stack.pump.drain();
        driver = DashboardTest.chrome();
    }

    static void beat(int i) {
        ok(stack.sendFrom("192.0.2." + i, "heartbeat", stack.adminKey, Map.of("team", TEAM, "agentId", "w" + i), "{}"));
    }

    @AfterAll
    static void stop() {
        DashboardTest.close(driver, door, stack);
    }

    static WebDriverWait waiting() {
        return (WebDriverWait) new WebDriverWait(driver, WAIT).ignoring(StaleElementReferenceException.class);
    }

    static void signIn(String key) {
        signIn(key, TEAM);
    }

    static void signIn(String key, String teamName) {
        driver.get(base + "/");
        if (driver.findElement(By.id("sign-out")).isDisplayed()) {
            driver.findElement(By.id("sign-out")).click();
        }
        WebElement keyInput = waiting().until(ExpectedConditions.visibilityOfElementLocated(By.id("key-input")));
        keyInput.sendKeys(key);
        WebElement team = driver.findElement(By.id("team-input"));
        team.clear();
        team.sendKeys(teamName);
        driver.findElement(By.id("login-button")).click();
    }

    @Test
    void deafLifeline_bannerShowsHowManySinceWhenWhy_readKeyRefused_adminReleases() throws Exception {
        signIn(stack.key(TEAM, Scope.READ));
        WebElement banner = waiting().until(ExpectedConditions.visibilityOfElementLocated(By.id("team-hold")));
        String text = driver.findElement(By.id("team-hold-text")).getText();
        assertTrue(text.contains("8 of 10 agents silent since"), text);
        assertTrue(text.contains("the silence spans 8 failure domains"), text);
        assertTrue(banner.findElement(By.id("hold-release")).isDisplayed());
        driver.findElement(By.id("hold-release")).click();
        waiting().until(d -> d.findElement(By.id("hold-result")).getText().contains("403"));
        assertTrue(driver.findElement(By.id("team-hold")).isDisplayed(), "still held");

        signIn(stack.adminKey);
        waiting().until(ExpectedConditions.visibilityOfElementLocated(By.id("team-hold")));
        DashboardTest.screenshot(driver, "hold");
        driver.findElement(By.id("hold-release")).click();
        waiting().until(d -> d.findElement(By.id("team-hold-text")).getText().startsWith("Hold released at"));
        assertTrue(!driver.findElement(By.id("hold-release")).isDisplayed(), "nothing left to release");
        DashboardTest.screenshot(driver, "hold-released");
    }

    /**
     * A fleet-wide hold as the sweep leaves it (the fleet's flag, and a team's share of it: its own 3 of 3 agents
     * held; FleetSelfPreservationTest drives the sweep itself): the team's banner says Lifeline may be unable to hear
     * agents across the fleet, the team's own count and since when; the admin's release frees the team from it.
     */
    @Test
    void fleetWideHold_bannerShowsTheTeamsOwnCount_adminReleasesTheTeam() throws Exception {
        String team = "fleetwide";
        String admin = stack.key(team, Scope.ADMIN);
        for (int i = 1; i <= 3; i++) {
            ok(stack.send("register", admin, Map.of("team", team), null, "{\"agentId\":\"f" + i
                    + "\",\"name\":\"Fleet " + i + "\",\"role\":\"worker\"}"));
            ok(stack.send("join", admin, Map.of("team", team, "agentId", "f" + i), null, null));
        }
        TeamStore teams = new TeamStore(stack.dynamo, stack.tables);
        Instant since = stack.clock.instant();
        try {
            assertTrue(teams.fleet().raise(new SweepPlan.FleetOutcome(40, 30, List.of(team), true, 0.5), since));
            assertTrue(teams.shareFleetHold(team, since, 3, 3, null));
            signIn(admin, team);
            waiting().until(ExpectedConditions.visibilityOfElementLocated(By.id("team-hold")));
            String text = driver.findElement(By.id("team-hold-text")).getText();
            assertTrue(text.startsWith("Fleet-wide self-preservation hold: Lifeline may be unable to hear agents "
                    + "across the fleet"), text);
            assertTrue(text.contains("3 of this team's 3 agents are held, since"), text);
            DashboardTest.screenshot(driver, "fleet-hold");
            driver.findElement(By.id("hold-release")).click();
            waiting().until(d -> d.findElement(By.id("team-hold-text")).getText()
                    .startsWith("Released from the fleet-wide hold at"));
            assertTrue(!driver.findElement(By.id("hold-release")).isDisplayed(), "nothing left to release");
        } finally {
            teams.clearFleetShare(team, since);
            teams.fleet().clear(since, stack.clock.instant());
        }
    }
}
