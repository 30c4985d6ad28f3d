package io.lifeline.client.daemon;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.lifeline.hooks.UsageLimit;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.Optional;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Codex CLI's usage limit as its rollout file and hooks give it (the lines below are Codex CLI 0.171.0's own, from a
 * run against a fake provider answering 429 {@code usage_limit_reached}; the user's prompt shortened): the reset is
 * the end of the minute Codex names, in its local time, and only the session's last turn counts.
 */
@Tag("unit")
class CodexLimitTest {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final ZoneId UTC = ZoneOffset.UTC;
    private static final String SESSION = "01a22346-0b86-7fa3-a6a0-fa71deacec44";
    private static final String PROMPT = "{\"timestamp\":\"2026-11-28T17:48:42.842Z\",\"ordinal\":8,\"type\":"
            + "\"event_msg\",\"payload\":{\"type\":\"item_completed\",\"thread_id\":\"" + SESSION + "\",\"item\":"
            + "{\"type\":\"UserMessage\",\"content\":[{\"type\":\"text\",\"text\":\"Run the command.\"}]}}}";
    private static final String TOKENS = "{\"timestamp\":\"2026-11-28T17:48:42.874Z\",\"ordinal\":9,\"type\":"
            + "\"event_msg\",\"payload\":{\"type\":\"token_count\",\"info\":null,\"rate_limits\":{\"limit_id\":"
            + "\"codex\",\"primary\":null,\"secondary\":null,\"rate_limit_reached_type\":null}}}";
    private static final String LIMITED = "{\"timestamp\":\"2026-11-28T17:48:42.885Z\",\"ordinal\":10,\"type\":"
            + "\"event_msg\",\"payload\":{\"type\":\"task_complete\",\"root_turn_id\":\"t1\",\"turn_id\":\"t1\","
            + "\"last_agent_message\":null,\"error\":{\"message\":\"You\u2019ve hit your usage limit. Try again at "
            + "5:49 PM.\",\"codex_error_info\":\"usage_limit_exceeded\"},\"started_at\":1795888122,"
            + "\"completed_at\":1795888122,\"duration_ms\":108}}";
    private static final String DONE = "{\"timestamp\":\"2026-11-28T17:50:02.100Z\",\"ordinal\":20,\"type\":"
            + "\"event_msg\",\"payload\":{\"type\":\"task_complete\",\"turn_id\":\"t2\",\"last_agent_message\":"
            + "\"Done.\",\"started_at\":1795888200,\"completed_at\":1795888202,\"duration_ms\":2100}}";
    private static final Instant NOW = Instant.parse("2026-11-28T17:48:43Z");

    @TempDir
    Path dir;

    private Path rollout(String... lines) throws Exception {
        Path file = Files.createDirectories(dir.resolve("sessions/2026/11/28"))
                .resolve("rollout-2026-11-28T17-48-42-" + SESSION + ".jsonl");
        Files.writeString(file, String.join("\n", lines) + "\n", StandardCharsets.UTF_8);
        return file;
    }

    private static JsonNode error(String json) throws Exception {
        return JSON.readTree(json);
    }

    @Test
    void theSessionEndHookNamesTheRolloutFile_ofItsOwnSessionOnly() throws Exception {
        Path file = rollout(PROMPT);
        String body = "{\"session_id\":\"" + SESSION + "\",\"transcript_path\":\"" + file + "\",\"cwd\":\"/w\","
                + "\"hook_event_name\":\"SessionEnd\",\"reason\":\"other\"}";
        assertEquals(file, CodexLimit.rollout(body.getBytes(StandardCharsets.UTF_8), SESSION));
        assertEquals(file, CodexLimit.rollout(body.getBytes(StandardCharsets.UTF_8), null));
        assertNull(CodexLimit.rollout(body.getBytes(StandardCharsets.UTF_8), "01a22346-0000-7000-8000-000000000000"));
        assertNull(CodexLimit.rollout("{\"transcript_path\":\"/etc/passwd\"}".getBytes(StandardCharsets.UTF_8),
                null), "only a rollout file");
        assertNull(CodexLimit.rollout(("{\"transcript_path\":\"rollout-2026-11-28T17-48-42-" + SESSION
                + ".jsonl\"}").getBytes(StandardCharsets.UTF_8), null), "only an absolute path");
        assertNull(CodexLimit.rollout("{\"hook_event_name\":\"Stop\"}".getBytes(StandardCharsets.UTF_8), null));
        assertNull(CodexLimit.rollout("not json".getBytes(StandardCharsets.UTF_8), null));
    }

    @Test
    void aTurnEndedAtTheUsageLimit_parksUntilTheEndOfTheMinuteCodexNames() throws Exception {
        Path file = rollout(PROMPT, TOKENS, LIMITED);
        // "Try again at 5:49 PM.": Codex rounds the reset down to the minute; it has surely reset at 17:50.
        assertEquals(Optional.of(Instant.parse("2026-11-28T17:50:00Z")), CodexLimit.limitUntil(file, NOW, UTC));
        // The same words in another zone: Codex's local time is the daemon's.
        assertEquals(Optional.of(Instant.parse("2026-11-28T16:50:00Z")),
                CodexLimit.limitUntil(file, Instant.parse("2026-11-28T16:48:43Z"), ZoneId.of("Europe/Berlin")));
    }

    @Test
    void onlyTheSessionsLastTurnCounts() throws Exception {
        assertEquals(Optional.empty(), CodexLimit.limitUntil(rollout(PROMPT, LIMITED, PROMPT, DONE), NOW, UTC),
                "a resumed session that then finished its turn is not at a limit");
        assertEquals(Optional.empty(), CodexLimit.limitUntil(rollout(PROMPT, TOKENS), NOW, UTC), "no turn ended");
        assertTrue(CodexLimit.limitUntil(rollout(PROMPT, DONE, PROMPT, LIMITED, TOKENS), NOW, UTC).isPresent());
        String other = LIMITED.replace("You\u2019ve hit your usage limit. Try again at 5:49 PM.",
                "stream disconnected before completion").replace("usage_limit_exceeded", "other");
        assertEquals(Optional.empty(), CodexLimit.limitUntil(rollout(PROMPT, other), NOW, UTC),
                "another failure is no usage limit");
        assertEquals(Optional.empty(), CodexLimit.limitUntil(dir.resolve("missing.jsonl"), NOW, UTC));
    }

    @Test
    void onlyTheFilesTailIsRead() throws Exception {
        String filler = PROMPT.replace("Run the command.", "x".repeat(CodexLimit.TAIL_BYTES));
        assertTrue(CodexLimit.limitUntil(rollout(PROMPT, filler, LIMITED), NOW, UTC).isPresent());
        assertEquals(Optional.empty(), CodexLimit.limitUntil(rollout(LIMITED, filler), NOW, UTC),
                "a turn's end out of the tail is not read (nor is the huge line it is cut in)");
    }

    @Test
    void theResetIsTheAnswersResetsAt_elseResetsInSeconds_elseTheWords_elseTheDefault() throws Exception {
        assertEquals(Instant.ofEpochSecond(1795888200), CodexLimit.reset(error("{\"message\":\"Try again at 5:49 "
                + "PM.\",\"resets_at\":1795888200,\"resets_in_seconds\":9}"), NOW, UTC));
        assertEquals(NOW.plusSeconds(90), CodexLimit.reset(error("{\"resets_in_seconds\":90}"), NOW, UTC));
        assertEquals(Instant.parse("2026-11-28T18:51:00Z"),
                CodexLimit.reset(error("{\"message\":\"Try again at 6:50 PM.\"}"), NOW, UTC));
        assertEquals(NOW.plusSeconds(20),
                CodexLimit.reset(error("{\"message\":\"Rate limit reached. Please try again in 20s.\"}"), NOW, UTC));
        assertEquals(NOW.plus(UsageLimit.DEFAULT_RESET), CodexLimit.reset(error("{\"message\":\"You\u2019ve hit your "
                + "usage limit. Try again later.\",\"codex_error_info\":\"usage_limit_exceeded\"}"), NOW, UTC));
        assertEquals(NOW, CodexLimit.reset(error("{\"resets_at\":1}"), NOW, UTC), "never before now");
        assertEquals(NOW.plus(UsageLimit.MAX_WAIT), CodexLimit.reset(error("{\"resets_at\":9999999999}"), NOW, UTC));
    }

    @Test
    void codexsWordsForTheResetTime() {
        assertEquals(Optional.of(Instant.parse("2026-11-28T21:36:00Z")),
                CodexLimit.tryAgainAt("Try again at 9:35 PM.", NOW, UTC));
        assertEquals(Optional.of(Instant.parse("2026-11-29T00:06:00Z")),
                CodexLimit.tryAgainAt("Try again at 12:05 AM.", NOW, UTC), "past today: tomorrow's");
        assertEquals(Optional.of(Instant.parse("2026-11-28T17:49:00Z")),
                CodexLimit.tryAgainAt("Try again at 5:48 PM.", NOW, UTC), "this minute: its end");
        assertEquals(Optional.of(Instant.parse("2026-11-29T12:01:00Z")),
                CodexLimit.tryAgainAt("Try again at 12:00 PM.", Instant.parse("2026-11-28T17:48:43Z"), UTC));
        assertEquals(Optional.of(Instant.parse("2026-11-29T21:36:00Z")),
                CodexLimit.tryAgainAt("You\u2019ve hit your usage limit. Try again at Nov 29th, 2026 9:35 PM.", NOW,
                        UTC));
        assertEquals(Optional.of(Instant.parse("2026-12-01T09:06:00Z")),
                CodexLimit.tryAgainAt("try again at Dec 1st, 2026 9:05 AM", NOW, UTC));
        assertEquals(Optional.empty(), CodexLimit.tryAgainAt("Try again later.", NOW, UTC));
        assertEquals(Optional.empty(), CodexLimit.tryAgainAt("Try again at 13:05 PM.", NOW, UTC));
        assertEquals(Optional.empty(), CodexLimit.tryAgainAt("Try again at Feb 30th, 2027 1:00 PM.", NOW, UTC));
    }

    @Test
    void aUsageLimitIsCodexsCategory_orWordsThatSayIt() throws Exception {
        assertTrue(CodexLimit.usageLimit(error("{\"message\":\"x\",\"codex_error_info\":\"usage_limit_exceeded\"}")));
        assertTrue(CodexLimit.usageLimit(error("{\"message\":\"You\u2019ve hit your usage limit.\"}")));
        assertTrue(CodexLimit.usageLimit(error("{\"message\":\"exceeded retry limit, last status: 429 Too Many "
                + "Requests\"}")));
        assertFalse(CodexLimit.usageLimit(error("{\"message\":\"stream disconnected\",\"codex_error_info\":"
                + "\"other\"}")));
    }
}
