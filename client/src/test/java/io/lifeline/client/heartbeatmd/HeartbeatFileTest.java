package io.lifeline.client.heartbeatmd;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

@Tag("unit")
class HeartbeatFileTest {

    @ParameterizedTest
    @ValueSource(strings = {"seed-basic.md", "seed-minimal.md", "seed-failure.md"})
    void render_whenNothingChanged_givesSeedExampleByteForByte(String name) {
        String text = Fixtures.seed(name);
        assertEquals(text, HeartbeatFile.parse(text).render());
    }

    @Test
    void render_withCrlfAndNoFinalNewline_givesInputBack() {
        String text = Fixtures.seed("seed-minimal.md").replace("\n", "\r\n").stripTrailing();
        assertEquals(text, HeartbeatFile.parse(text).render());
    }

    @Test
    void parse_seedBasicExample_readsFrontmatterAndActions() {
        HeartbeatFile hb = HeartbeatFile.parse(Fixtures.seed("seed-basic.md"));
        assertEquals(1, hb.version());
        assertEquals("2024-01-15T10:30:00Z", hb.lastWake().toString());
        assertEquals("idle", hb.status());
        assertEquals(2, hb.actions().size());
        Action check = hb.action("action-001");
        assertEquals(Priority.HIGH, check.priority());
        assertEquals("Check API health", check.name());
        assertEquals("http_check", check.type());
        assertEquals("https://api.example.com/health", check.field("target"));
        assertEquals(ScheduleSpec.Kind.EVERY, check.schedule().kind());
        assertEquals(ActionStatus.PENDING, check.status());
        assertEquals(ScheduleSpec.Kind.CALENDAR, hb.action("action-002").schedule().kind());
    }

    @Test
    void parse_actionWithAllFieldsAndParams_readsThem() {
        String text = "---\nversion: 1\nowner: team-a\n---\n\n### [CRITICAL] Deploy\n- **id**: a1\n- **type**: shell\n"
                + "- **status**: pending\n- **schedule**: cron:*/5 * * * *\n- **retry**: 3\n- **timeout**: 30s\n"
                + "- **depends_on**: a0\n- **condition**: not:env:PAUSED\n- **params**:\n  - command: ./deploy.sh\n"
                + "  - region: eu\n\n### [BG] Zero\n- **id**: a0\n- **type**: shell\n- **command**: true\n";
        HeartbeatFile hb = HeartbeatFile.parse(text);
        Action a = hb.action("a1");
        assertEquals(3, a.maxAttempts());
        assertEquals(30, a.timeout().toSeconds());
        assertEquals(List.of("a0"), a.dependsOn());
        assertEquals(Map.of("command", "./deploy.sh", "region", "eu"), a.params());
        assertEquals("./deploy.sh", a.fieldOrParam("command"));
        assertEquals("team-a", hb.frontmatter().get("owner"));
        assertEquals(text, hb.render());
    }

    @Test
    void set_oneField_rewritesOnlyThatLine() {
        String text = Fixtures.seed("seed-basic.md");
        HeartbeatFile hb = HeartbeatFile.parse(text);
        hb.action("action-001").set("status", "completed");
        hb.action("action-001").set("result", "OK (200)");
        String expected = text.replace("- **schedule**: every:5m\n- **status**: pending\n",
                "- **schedule**: every:5m\n- **status**: completed\n- **result**: OK (200)\n");
        assertEquals(expected, hb.render());
    }

    @Test
    void setFrontmatter_changedAndNewKeys_rewritesLineAndAppendsBeforeClose() {
        String text = Fixtures.seed("seed-minimal.md");
        HeartbeatFile hb = HeartbeatFile.parse(text);
        hb.setFrontmatter("status", "error");
        hb.setFrontmatter("last_error", "a1: Exit code 2: no such file");
        hb.setFrontmatter("error_count", 1);
        String expected = text.replace("status: idle\n---\n",
                "status: error\nlast_error: \"a1: Exit code 2: no such file\"\nerror_count: 1\n---\n");
        assertEquals(expected, hb.render());
        assertEquals("a1: Exit code 2: no such file", HeartbeatFile.parse(hb.render()).lastError());
    }

    @Test
    void setFrontmatter_sameValue_keepsOriginalBytes() {
        String text = "---\nversion: 1\nstatus:   idle   # trailing comment\n---\n";
        HeartbeatFile hb = HeartbeatFile.parse(text);
        hb.setFrontmatter("status", "idle");
        assertEquals(text, hb.render());
    }

    @Test
    void parse_headingInsideCodeFence_isNotAnAction() {
        String text = "---\nversion: 1\n---\n\n```markdown\n### [URGENT] Not an action\n- **id**: x\n```\n";
        assertTrue(HeartbeatFile.parse(text).actions().isEmpty());
    }

    @Test
    void parse_unknownPriority_namesLine() {
        String text = "---\nversion: 1\n---\n\n### [URGENT] Thing\n- **id**: x\n- **type**: shell\n";
        HeartbeatParseException e = assertThrows(HeartbeatParseException.class, () -> HeartbeatFile.parse(text));
        assertEquals(5, e.line());
        assertTrue(e.getMessage().startsWith("line 5: unknown priority [URGENT]"), e.getMessage());
        assertFalse(e.corrupt());
    }

    @Test
    void parse_badSchedule_namesScheduleLine() {
        String text = "---\nversion: 1\n---\n### [LOW] T\n- **id**: x\n- **type**: shell\n- **schedule**: every:5 minutes\n";
        HeartbeatParseException e = assertThrows(HeartbeatParseException.class, () -> HeartbeatFile.parse(text));
        assertEquals(7, e.line());
        assertTrue(e.reason().startsWith("invalid schedule"), e.getMessage());
    }

    @Test
    void parse_unknownCondition_namesConditionLine() {
        String text = "---\nversion: 1\n---\n### [LOW] T\n- **id**: x\n- **type**: shell\n- **condition**: weather:sunny\n";
        HeartbeatParseException e = assertThrows(HeartbeatParseException.class, () -> HeartbeatFile.parse(text));
        assertEquals(7, e.line());
        assertTrue(e.reason().contains("unknown condition 'weather:sunny'"), e.getMessage());
    }

    @Test
    void parse_duplicateIdAndUnknownDependencyAndBadStatus_nameTheirLines() {
        String dup = "---\nversion: 1\n---\n### [LOW] A\n- **id**: x\n- **type**: shell\n### [LOW] B\n- **id**: x\n- **type**: shell\n";
        assertEquals(7, assertThrows(HeartbeatParseException.class, () -> HeartbeatFile.parse(dup)).line());
        String dep = "---\nversion: 1\n---\n### [LOW] A\n- **id**: x\n- **type**: shell\n- **depends_on**: nope\n";
        HeartbeatParseException e = assertThrows(HeartbeatParseException.class, () -> HeartbeatFile.parse(dep));
        assertEquals(7, e.line());
        assertTrue(e.reason().contains("'nope'"));
        String status = "---\nversion: 1\n---\n### [LOW] A\n- **id**: x\n- **type**: shell\n- **status**: done\n";
        assertEquals(7, assertThrows(HeartbeatParseException.class, () -> HeartbeatFile.parse(status)).line());
        String noId = "---\nversion: 1\n---\n### [LOW] A\n- **type**: shell\n";
        assertEquals(4, assertThrows(HeartbeatParseException.class, () -> HeartbeatFile.parse(noId)).line());
    }

    @Test
    void parse_missingOrBrokenFrontmatter_isCorrupt() {
        assertTrue(assertThrows(HeartbeatParseException.class, () -> HeartbeatFile.parse("")).corrupt());
        assertTrue(assertThrows(HeartbeatParseException.class, () -> HeartbeatFile.parse("# Heartbeat\n")).corrupt());
        HeartbeatParseException open = assertThrows(HeartbeatParseException.class,
                () -> HeartbeatFile.parse("---\nversion: 1\nstatus: idle\n"));
        assertTrue(open.corrupt());
        assertTrue(open.reason().contains("never closed"));
        HeartbeatParseException yaml = assertThrows(HeartbeatParseException.class,
                () -> HeartbeatFile.parse("---\nversion: 1\nstatus: [idle\n---\n"));
        assertTrue(yaml.corrupt());
        assertTrue(yaml.line() >= 3, yaml.getMessage());
    }

    @Test
    void parse_badFrontmatterValue_namesLineAndIsNotCorrupt() {
        HeartbeatParseException e = assertThrows(HeartbeatParseException.class,
                () -> HeartbeatFile.parse("---\nversion: 1\nlast_wake: yesterday\n---\n"));
        assertEquals(3, e.line());
        assertFalse(e.corrupt());
    }

    @Test
    void computeConfigHash_changesWithDefinitionNotWithRunState() {
        HeartbeatFile hb = HeartbeatFile.parse(Fixtures.seed("seed-basic.md"));
        String before = hb.computeConfigHash();
        hb.action("action-001").set("status", "completed");
        assertEquals(before, hb.computeConfigHash());
        hb.action("action-001").set("schedule", "every:10m");
        assertFalse(before.equals(hb.computeConfigHash()));
        assertNull(hb.configHash());
    }
}
