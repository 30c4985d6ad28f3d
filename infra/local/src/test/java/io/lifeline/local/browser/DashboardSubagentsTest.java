package io.lifeline.local.browser;

import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lifeline.local.app.LifelineLocal;
import io.lifeline.local.stack.TestStack;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Clock;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.openqa.selenium.By;
import org.openqa.selenium.StaleElementReferenceException;
import org.openqa.selenium.WebElement;
import org.openqa.selenium.chrome.ChromeDriver;
import org.openqa.selenium.support.ui.ExpectedConditions;
import org.openqa.selenium.support.ui.WebDriverWait;

/** The dashboard's agent page lists a parent's running subagents with since when, as its hooks left them. */
@Tag("browser")
@Timeout(120)
class DashboardSubagentsTest {
    private static LifelineLocal local;
    private static ChromeDriver driver;
    private static final HttpClient HTTP = HttpClient.newHttpClient();

    @BeforeAll
    static void start() throws Exception {
        DashboardTest.assumeChromium();
        local = LifelineLocal.start(new LifelineLocal.Options(0, null, TestStack.template(), Map.of(),
                Clock.systemUTC()));
        post("/v1/teams/local/agents", "{\"agentId\":\"pia\",\"name\":\"Pia\",\"role\":\"lead\","
                + "\"staleAfterSeconds\":600}");
        post("/v1/teams/local/agents/pia/hooks/claude-code", "{\"session_id\":\"s\",\"hook_event_name\":\"SessionStart\"}");
        post("/v1/teams/local/agents/pia/hooks/claude-code", "{\"session_id\":\"s\",\"hook_event_name\":"
                + "\"SubagentStart\",\"agent_id\":\"sub-x\",\"agent_type\":\"Explore\"}");
        driver = DashboardTest.chrome();
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

    private static void post(String path, String body) throws Exception {
        HttpResponse<String> r = HTTP.send(HttpRequest.newBuilder(URI.create(local.url() + path))
                .header("Authorization", "Bearer " + local.adminKey()).header("content-type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(body)).build(), HttpResponse.BodyHandlers.ofString());
        assertTrue(r.statusCode() < 300, r.statusCode() + " " + r.body());
    }

    @Test
    void theAgentPageShowsItsRunningSubagents() {
        WebDriverWait wait = (WebDriverWait) new WebDriverWait(driver, Duration.ofSeconds(15))
                .ignoring(StaleElementReferenceException.class);
        driver.get(local.url() + "/");
        WebElement team = wait.until(ExpectedConditions.visibilityOfElementLocated(By.id("team-input")));
        team.clear();
        team.sendKeys("local");
        driver.findElement(By.id("key-input")).sendKeys(local.adminKey());
        driver.findElement(By.id("login-button")).click();
        wait.until(d -> {
            d.findElement(By.cssSelector("tr.agent[data-agent-id='pia']")).click();
            return true;
        });
        wait.until(ExpectedConditions.visibilityOfElementLocated(By.id("agent-view")));
        wait.until(d -> d.findElement(By.id("agent-facts")).getText().contains("Subagents"));
        String facts = driver.findElement(By.id("agent-facts")).getText();
        assertTrue(facts.contains("1 running: sub-x (Explore) since "), facts);
    }
}
