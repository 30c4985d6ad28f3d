package io.lifeline.hooks;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.Optional;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * {@link UsageLimit}: which failures are a provider's limit, and the reset read from their text in the forms providers
 * and runtimes word it; a text naming none has no reset (the caller's default applies).
 */
@Tag("unit")
class UsageLimitTest {
    private static final Instant NOW = Instant.parse("2026-11-28T14:00:00Z");

    @Test
    void limits_areRecognised_otherFailuresAreNot() {
        assertTrue(UsageLimit.reported("rate_limit: API Error: Request rejected (429)"));
        assertTrue(UsageLimit.reported("Claude AI usage limit reached|1795877700"));
        assertTrue(UsageLimit.reported("RESOURCE_EXHAUSTED: quota exceeded"));
        assertTrue(UsageLimit.reported("Too Many Requests"));
        assertFalse(UsageLimit.reported("overloaded_error"));
        assertFalse(UsageLimit.reported("prompt is too long: context window exceeded"));
        assertFalse(UsageLimit.reported(null));
    }

    @Test
    void theReset_isReadFromEachWording() {
        assertEquals(Optional.of(NOW.plusMillis(6_500)), UsageLimit.reset("Please try again in 6.5s.", NOW));
        assertEquals(Optional.of(NOW.plusSeconds(90)), UsageLimit.reset("Please try again in 1m30s.", NOW));
        assertEquals(Optional.of(NOW.plusMillis(20)), UsageLimit.reset("try again in 20ms", NOW));
        assertEquals(Optional.of(NOW.plus(Duration.ofHours(2))), UsageLimit.reset("Try again in 2 hours", NOW));
        assertEquals(Optional.of(NOW.plusSeconds(20)), UsageLimit.reset("retry after 20 seconds", NOW));
        assertEquals(Optional.of(Instant.parse("2026-11-28T15:00:00Z")),
                UsageLimit.reset("Your limit resets at 2026-11-28T15:00:00Z", NOW));
        assertEquals(Optional.of(Instant.ofEpochSecond(1795877700)),
                UsageLimit.reset("Claude AI usage limit reached|1795877700", NOW));
        assertEquals(Optional.of(Instant.ofEpochSecond(1795877700)),
                UsageLimit.reset("{\"type\":\"usage_limit_reached\",\"resets_at\":1795877700}", NOW));
        assertEquals(Optional.of(NOW.plusSeconds(3600)),
                UsageLimit.reset("{\"type\":\"usage_limit_reached\",\"resets_in_seconds\":3600}", NOW));
    }

    @Test
    void noReset_whenTheTextNamesNone_aPastOneIsNow_aFarOneIsAWeek() {
        assertEquals(Optional.empty(), UsageLimit.reset("This request would exceed your rate limit", NOW));
        assertEquals(Optional.empty(), UsageLimit.reset(null, NOW));
        assertEquals(Optional.of(NOW), UsageLimit.reset("resets at 2026-11-28T13:00:00Z", NOW));
        assertEquals(Optional.of(NOW.plus(UsageLimit.MAX_WAIT)), UsageLimit.reset("try again in 900h", NOW));
    }

    @Test
    void claudeCodesStopFailure_givesItsMessageForTheReset_aStopDoesNot() {
        HookEvent failure = HookReader.read(HookRuntime.CLAUDE_CODE, ("{\"hook_event_name\":\"StopFailure\","
                + "\"error\":\"rate_limit\",\"last_assistant_message\":\"API Error: Request rejected (429) \u00b7 "
                + "Please try again in 8s.\"}").getBytes(StandardCharsets.UTF_8));
        assertEquals(HookSignal.FAILED, failure.signal());
        assertTrue(UsageLimit.reported(failure.errorText()));
        assertEquals(Optional.of(NOW.plusSeconds(8)), UsageLimit.reset(failure.errorText(), NOW));
        HookEvent stop = HookReader.read(HookRuntime.CLAUDE_CODE, ("{\"hook_event_name\":\"Stop\","
                + "\"last_assistant_message\":\"the model's own words: try again in 8s\"}")
                .getBytes(StandardCharsets.UTF_8));
        assertEquals(null, stop.errorText(), "a turn's last message is never kept");
    }
}
