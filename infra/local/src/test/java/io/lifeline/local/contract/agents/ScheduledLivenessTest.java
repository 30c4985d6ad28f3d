package io.lifeline.local.contract.agents;

import static io.lifeline.local.stack.TestStack.ok;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lifeline.local.stack.TestStack;
import io.lifeline.schedule.Deadlines;
import io.lifeline.schedule.Schedules;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * Agents on schedules through the gateway and the sweep: the deadline a join or heartbeat answers
 * is the schedule's next slot plus the agent's staleAfter as grace ({@link Deadlines#next}), an early
 * heartbeat counts for the coming slot, the sweep kills only after that deadline plus the grace misses,
 * {@code nextHeartbeatWithinSeconds} overrides the schedule for one deadline, bad schedules are refused, and
 * daily slots in Europe/Berlin across both 2026 daylight-saving changes. Expected instants are written out
 * by hand and also checked against {@link Deadlines#next}, so the API and the domain cannot drift apart.
 */
@Tag("contract")
class ScheduledLivenessTest {
    private static final Instant T0 = TestStack.START;
    private static final Duration GRACE = Duration.ofSeconds(60);
    private static final String TEAM = TestStack.TEAM;
    private static final TestStack.Opened STACKS = new TestStack.Opened();

    @AfterAll
    static void stop() {
        STACKS.closeAll();
    }

    private static TestStack shared;

    /** One stack for the tests that never sweep or move the clock (refused registrations). */
    private static synchronized TestStack shared() throws Exception {
        if (shared == null) {
            shared = STACKS.open();
        }
        return shared;
    }

    // ---- helpers ------------------------------------------------------------------------------------------

    private static String registration(String agentId, String schedule, String timeZone) {
        return "{\"agentId\":\"" + agentId + "\",\"name\":\"Agent " + agentId + "\",\"role\":\"worker\""
                + (schedule == null ? "" : ",\"schedule\":\"" + schedule + "\"")
                + (timeZone == null ? "" : ",\"timeZone\":\"" + timeZone + "\"") + "}";
    }

    /** Registers with the schedule and joins at the clock's instant; answers the join. */
    private static TestStack.Reply joinScheduled(TestStack s, String agentId, String schedule, String timeZone) {
        TestStack.Reply reg = ok(s.team("register", registration(agentId, schedule, timeZone)));
        assertEquals(schedule.startsWith("at:") ? reg.text("schedule") : schedule, reg.text("schedule"));
        return ok(s.agent("join", agentId, null));
    }

    /** The hand-written expectation, checked against the domain's rule for the same sign of life. */
    private static String deadline(String expected, String schedule, String timeZone, Instant signOfLife) {
        Instant byRule = Deadlines.next(Schedules.parse(schedule, timeZone), signOfLife, GRACE);
        assertEquals(expected, String.valueOf(byRule), "Deadlines.next for " + schedule + " at " + signOfLife);
        return expected;
    }

    private static TestStack.Reply heartbeatAt(TestStack s, Instant at, String agentId, String body) {
        s.clock.set(at);
        return ok(s.heartbeat(agentId, body));
    }

    private static List<String> sweepAt(TestStack s, Instant at) {
        s.clock.set(at);
        return s.sweep();
    }

    /** The item's misses; a sign of life removes the count, so absent is 0. */
    private static int misses(TestStack s, String agentId) {
        var misses = s.agentItem(agentId).get("misses");
        return misses == null ? 0 : Integer.parseInt(misses.n());
    }

    private static Instant at(String iso) {
        return Instant.parse(iso);
    }

    /** Sweeps every 15 s from {@code from} up to and including {@code to}; none may record a miss or a death. */
    private static void quietSweeps(TestStack s, String agentId, Instant from, Instant to) {
        for (Instant t = from; !t.isAfter(to); t = t.plusSeconds(15)) {
            assertEquals(List.of(), sweepAt(s, t), "at " + t);
            assertEquals(0, misses(s, agentId), "at " + t);
        }
    }

    /** Every:. */
    @Nested
    class Every {
        @Test
        void every_deadlineIsIntervalPlusGrace_fromEachHeartbeat_sweepKillsOnlyAfterIt() throws Exception {
            TestStack s = STACKS.open();
            TestStack.Reply join = joinScheduled(s, "e5", "every:5m", null);
            assertEquals(deadline("2026-03-01T12:06:00Z", "every:5m", null, T0), join.text("deadline"));

            TestStack.Reply hb = heartbeatAt(s, at("2026-03-01T12:02:00Z"), "e5", "{}");
            String expected = deadline("2026-03-01T12:08:00Z", "every:5m", null, at("2026-03-01T12:02:00Z"));
            assertEquals(expected, hb.text("nextDeadline"));
            assertEquals(expected, s.agentView("e5").get("deadline").asText());

            // A plain agent would be dead 90 s after this heartbeat; this one is not even late until 12:08.
            quietSweeps(s, "e5", at("2026-03-01T12:02:15Z"), at("2026-03-01T12:08:00Z"));
            assertEquals(List.of(), sweepAt(s, at("2026-03-01T12:08:15Z")));
            assertEquals(1, misses(s, "e5"));
            assertEquals(List.of(TEAM + "/e5"), sweepAt(s, at("2026-03-01T12:08:30Z")));
            assertTrue(s.agentView("e5").get("lastTransition").get("reason").asText()
                    .contains("no heartbeat for 390 s"));
        }

        @Test
        void every_heartbeatIsNeverEarly() throws Exception {
            TestStack s = STACKS.open();
            joinScheduled(s, "e5", "every:5m", null);
            // Ten seconds after the join: the interval runs from this heartbeat, it does not count for a slot.
            TestStack.Reply hb = heartbeatAt(s, T0.plusSeconds(10), "e5", "{}");
            assertEquals(deadline("2026-03-01T12:06:10Z", "every:5m", null, T0.plusSeconds(10)), hb.text("nextDeadline"));
        }
    }

    /** Cron: with a time zone. */
    @Nested
    class Cron {
        @Test
        void cron_inTimeZone_slotsFollowTheZonesWallClock() throws Exception {
            TestStack s = STACKS.open();
            String cron = "cron:*/10 * * * *";
            String zone = "Asia/Kathmandu"; // UTC+05:45, so local :50 is 12:05Z, not a multiple of ten in UTC
            TestStack.Reply join = joinScheduled(s, "c10", cron, zone);
            assertEquals(zone, join.text("timeZone"));
            // 12:00Z is 17:45 in Kathmandu; the next slot is 17:50 = 12:05Z (in UTC it would be 12:10Z).
            assertEquals(deadline("2026-03-01T12:06:00Z", cron, zone, T0), join.text("deadline"));

            // Late but within grace for 12:05: the next slot is 18:00 local = 12:15Z.
            TestStack.Reply late = heartbeatAt(s, at("2026-03-01T12:05:10Z"), "c10", "{}");
            assertEquals(deadline("2026-03-01T12:16:00Z", cron, zone, at("2026-03-01T12:05:10Z")),
                    late.text("nextDeadline"));

            // 30 s before the 12:15Z slot is early: it counts for that slot, the deadline is the one after.
            TestStack.Reply early = heartbeatAt(s, at("2026-03-01T12:14:30Z"), "c10", "{}");
            assertEquals(deadline("2026-03-01T12:26:00Z", cron, zone, at("2026-03-01T12:14:30Z")),
                    early.text("nextDeadline"));
            assertEquals(List.of(), sweepAt(s, at("2026-03-01T12:16:30Z")), "the 12:15Z slot was covered early");
            quietSweeps(s, "c10", at("2026-03-01T12:24:00Z"), at("2026-03-01T12:26:00Z"));
            assertEquals(List.of(), sweepAt(s, at("2026-03-01T12:26:15Z")));
            assertEquals(List.of(TEAM + "/c10"), sweepAt(s, at("2026-03-01T12:26:30Z")));
        }

        @Test
        void cron_heartbeatMoreThanGraceBeforeSlot_isNotEarly() throws Exception {
            TestStack s = STACKS.open();
            joinScheduled(s, "c10", "cron:*/10 * * * *", "UTC");
            TestStack.Reply hb = heartbeatAt(s, at("2026-03-01T12:08:59Z"), "c10", "{}");
            assertEquals(deadline("2026-03-01T12:11:00Z", "cron:*/10 * * * *", "UTC", at("2026-03-01T12:08:59Z")),
                    hb.text("nextDeadline"), "61 s before the slot: the heartbeat does not count for it");
        }
    }

    /** Daily: and hourly. */
    @Nested
    class DailyAndHourly {
        @Test
        void daily_inBerlin_earlyHeartbeatCountsForTodaysSlot_sweepWaitsForTomorrows() throws Exception {
            TestStack s = STACKS.open();
            String daily = "daily:02:00";
            String zone = "Europe/Berlin";
            TestStack.Reply join = joinScheduled(s, "d2", daily, zone);
            // 12:00Z on 1 March is 13:00 CET: the next 02:00 CET is 01:00Z on 2 March.
            assertEquals(deadline("2026-03-02T01:01:00Z", daily, zone, T0), join.text("deadline"));
            assertEquals(List.of(), sweepAt(s, T0.plusSeconds(90)), "no plain 60 s staleness for a daily agent");
            assertEquals(0, misses(s, "d2"));

            Instant early = at("2026-03-02T00:59:30Z");
            TestStack.Reply hb = heartbeatAt(s, early, "d2", "{}");
            assertEquals(deadline("2026-03-03T01:01:00Z", daily, zone, early), hb.text("nextDeadline"));
            assertEquals(List.of(), sweepAt(s, at("2026-03-02T01:01:15Z")), "today's slot was covered early");
            assertEquals(0, misses(s, "d2"));

            assertEquals(List.of(), sweepAt(s, at("2026-03-03T01:01:00Z")));
            assertEquals(0, misses(s, "d2"));
            assertEquals(List.of(), sweepAt(s, at("2026-03-03T01:01:15Z")));
            assertEquals(1, misses(s, "d2"));
            assertEquals(List.of(TEAM + "/d2"), sweepAt(s, at("2026-03-03T01:01:30Z")));
        }

        @Test
        void hourly_inKolkata_slotsAtHalfPastUtc() throws Exception {
            TestStack s = STACKS.open();
            TestStack.Reply join = joinScheduled(s, "h1", "hourly", "Asia/Kolkata");
            // 12:00Z is 17:30 IST; the top of the next hour is 18:00 IST = 12:30Z.
            assertEquals(deadline("2026-03-01T12:31:00Z", "hourly", "Asia/Kolkata", T0), join.text("deadline"));
        }
    }

    /** At:. */
    @Nested
    class At {
        @Test
        void at_beforeTheInstant_deadlineIsItPlusGrace_silentAgentDiesAfterIt() throws Exception {
            TestStack s = STACKS.open();
            TestStack.Reply join = joinScheduled(s, "once", "at:2026-03-01T13:30:00+01:00", null);
            assertEquals("at:2026-03-01T12:30:00Z", s.agentView("once").get("schedule").asText(), "canonical UTC");
            assertEquals(deadline("2026-03-01T12:31:00Z", "at:2026-03-01T12:30:00Z", null, T0), join.text("deadline"));

            assertEquals(List.of(), sweepAt(s, T0.plusSeconds(90)));
            quietSweeps(s, "once", at("2026-03-01T12:29:00Z"), at("2026-03-01T12:31:00Z"));
            assertEquals(List.of(), sweepAt(s, at("2026-03-01T12:31:15Z")));
            assertEquals(List.of(TEAM + "/once"), sweepAt(s, at("2026-03-01T12:31:30Z")));
        }

        @Test
        void at_heartbeatForTheInstant_leavesNoDeadline_answersNever_neverSwept() throws Exception {
            TestStack s = STACKS.open();
            joinScheduled(s, "once", "at:2026-03-01T12:30:00Z", null);

            // Early (30 s before): it counts for the one expected time, and nothing is expected after it.
            Instant early = at("2026-03-01T12:29:30Z");
            TestStack.Reply hb = heartbeatAt(s, early, "once", "{}");
            assertEquals("null", deadline("null", "at:2026-03-01T12:30:00Z", null, early));
            // The answer still carries a time (the heartbeat protocol requires one): never, as the sweep applies none.
            assertEquals("9999-12-31T23:59:59Z", hb.text("nextDeadline"), hb.body().toString());
            assertFalse(s.agentView("once").has("deadline"));
            assertNull(s.agentItem("once").get("deadline"));

            assertEquals(List.of(), sweepAt(s, at("2026-03-01T13:00:00Z")));
            assertEquals(List.of(), sweepAt(s, at("2026-03-08T12:00:00Z")));
            assertEquals(0, misses(s, "once"));
            assertEquals("ready", s.status("once"));
        }
    }

    /** NextHeartbeatWithinSeconds. */
    @Nested
    class NextHeartbeatWithinSeconds {
        @Test
        void nextHeartbeatWithinSeconds_overridesTheSchedule_forOneDeadline() throws Exception {
            TestStack s = STACKS.open();
            joinScheduled(s, "e5", "every:5m", null);

            TestStack.Reply hb = heartbeatAt(s, T0, "e5", "{\"nextHeartbeatWithinSeconds\":900}");
            assertEquals("2026-03-01T12:15:00Z", hb.text("nextDeadline"), "now + 900 s, not the schedule's 12:06");
            assertEquals(List.of(), sweepAt(s, at("2026-03-01T12:10:00Z")));
            assertEquals(List.of(), sweepAt(s, at("2026-03-01T12:15:00Z")));
            assertEquals(0, misses(s, "e5"));
            assertEquals(List.of(), sweepAt(s, at("2026-03-01T12:15:15Z")));
            assertEquals(1, misses(s, "e5"));

            // The next plain heartbeat is back on the schedule.
            TestStack.Reply plain = heartbeatAt(s, at("2026-03-01T12:16:00Z"), "e5", "{}");
            assertEquals("2026-03-01T12:22:00Z", plain.text("nextDeadline"));
            assertEquals(0, misses(s, "e5"));
        }

        @Test
        void nextHeartbeatWithinSeconds_shorterThanTheSchedule_alsoWins() throws Exception {
            TestStack s = STACKS.open();
            joinScheduled(s, "d2", "daily:02:00", "Europe/Berlin");
            TestStack.Reply hb = heartbeatAt(s, T0, "d2", "{\"nextHeartbeatWithinSeconds\":30}");
            assertEquals("2026-03-01T12:00:30Z", hb.text("nextDeadline"));
            assertEquals(List.of(), sweepAt(s, at("2026-03-01T12:00:45Z")));
            assertEquals(1, misses(s, "d2"));
        }
    }

    /** Refused registrations. */
    @Nested
    class RefusedRegistrations {
        @ParameterizedTest
        @CsvSource(delimiter = '|', value = {
                "every:5x           | UTC           | unknown unit",
                "every:0m           | UTC           | greater than zero",
                "every:5            | UTC           | no unit",
                "every:8d           | UTC           | longest interval",
                "cron:61 * * * *    | UTC           | invalid cron expression",
                "cron:* * *         | UTC           | 5 fields",
                "cron:0 0 30 2 *    | UTC           | never runs",
                "daily:25:00        | UTC           | not a time of day",
                "daily:2am          | UTC           | HH:MM",
                "hourly:5           | UTC           | takes no argument",
                "at:tomorrow        | UTC           | ISO-8601",
                "weekly             | UTC           | unknown schedule form",
                "startup            | UTC           | not a time schedule",
                "daily:02:00        | Mars/Olympus  | unknown time zone",
        })
        void register_badSchedule_answers400InvalidScheduleWithReason(String schedule, String zone, String why)
                throws Exception {
            TestStack s = shared();
            String id = "bad-" + Integer.toHexString((schedule + zone).hashCode());
            TestStack.Reply r = s.writesNothing(() -> s.team("register", registration(id, schedule, zone)));
            assertEquals(400, r.status(), r.body().toString());
            assertEquals("INVALID_SCHEDULE", r.code());
            assertTrue(r.text("error").contains(why), r.text("error"));
            assertEquals(404, s.agent("get-agent", id, null).status());
        }

        @Test
        void register_timeZoneWithoutSchedule_answers400() throws Exception {
            TestStack s = shared();
            TestStack.Reply r = s.writesNothing(() -> s.team("register", registration("tz-only", null, "Europe/Berlin")));
            assertEquals(400, r.status(), r.body().toString());
            assertEquals("INVALID_FIELD", r.code());
            assertTrue(r.text("error").contains("schedule"), r.text("error"));
        }
    }

    /** Daylight saving in Europe/Berlin (2026-03-29 and 2026-10-25). */
    @Nested
    class DaylightSaving {
        @Test
        void daily_berlinSpringForward_slotMovesToThreeOclock_thenTheDayIs23Hours() throws Exception {
            TestStack s = STACKS.open();
            String daily = "daily:02:00";
            String zone = "Europe/Berlin";
            // 28 March, 02:00:10 CET (01:00:10Z): just after that day's slot.
            Instant joinAt = at("2026-03-28T01:00:10Z");
            s.clock.set(joinAt);
            TestStack.Reply join = joinScheduled(s, "d2", daily, zone);
            // 29 March has no 02:00 (clocks jump 02:00 CET -> 03:00 CEST); the slot is 03:00 CEST = 01:00Z.
            assertEquals(deadline("2026-03-29T01:01:00Z", daily, zone, joinAt), join.text("deadline"));

            // Reading 02:00 as CEST (00:00Z) would have made the agent late by now.
            assertEquals(List.of(), sweepAt(s, at("2026-03-29T00:01:15Z")));
            assertEquals(List.of(), sweepAt(s, at("2026-03-29T01:01:00Z")));
            assertEquals(0, misses(s, "d2"));
            assertEquals(List.of(), sweepAt(s, at("2026-03-29T01:01:15Z")));
            assertEquals(1, misses(s, "d2"));

            // From 03:01:20 CEST the next 02:00 is 02:00 CEST on 30 March = 00:00Z.
            Instant beat = at("2026-03-29T01:01:20Z");
            TestStack.Reply hb = heartbeatAt(s, beat, "d2", "{}");
            assertEquals(0, misses(s, "d2"));
            assertEquals(deadline("2026-03-30T00:01:00Z", daily, zone, beat), hb.text("nextDeadline"));
            assertEquals(List.of(), sweepAt(s, at("2026-03-30T00:01:00Z")));
            assertEquals(List.of(), sweepAt(s, at("2026-03-30T00:01:15Z")));
            assertEquals(1, misses(s, "d2"));
            assertEquals(List.of(TEAM + "/d2"), sweepAt(s, at("2026-03-30T00:01:30Z")));
        }

        @Test
        void daily_berlinFallBack_repeatedTwoOclockIsOneSlot_thenTheDayIs25Hours() throws Exception {
            TestStack s = STACKS.open();
            String daily = "daily:02:00";
            String zone = "Europe/Berlin";
            // 24 October, 02:00:10 CEST (00:00:10Z).
            Instant joinAt = at("2026-10-24T00:00:10Z");
            s.clock.set(joinAt);
            TestStack.Reply join = joinScheduled(s, "d2", daily, zone);
            // 25 October has 02:00 twice (CEST 00:00Z, then CET 01:00Z); the slot is the first.
            assertEquals(deadline("2026-10-25T00:01:00Z", daily, zone, joinAt), join.text("deadline"));
            assertEquals(List.of(), sweepAt(s, at("2026-10-25T00:00:00Z")));
            assertEquals(0, misses(s, "d2"));

            // Heartbeat at the first 02:00: the repeated 02:00 an hour later is not a second slot, the next one
            // is 02:00 CET on 26 October = 01:00Z, 25 hours on.
            Instant beat = at("2026-10-25T00:00:05Z");
            TestStack.Reply hb = heartbeatAt(s, beat, "d2", "{}");
            assertEquals(deadline("2026-10-26T01:01:00Z", daily, zone, beat), hb.text("nextDeadline"));
            assertEquals(List.of(), sweepAt(s, at("2026-10-25T01:01:30Z")), "no miss for the second 02:00");
            assertEquals(List.of(), sweepAt(s, at("2026-10-26T00:01:30Z")), "no miss where a 24-hour day would end");
            assertEquals(List.of(), sweepAt(s, at("2026-10-26T01:01:00Z")));
            assertEquals(0, misses(s, "d2"));
            assertEquals(List.of(), sweepAt(s, at("2026-10-26T01:01:15Z")));
            assertEquals(1, misses(s, "d2"));
            assertEquals(List.of(TEAM + "/d2"), sweepAt(s, at("2026-10-26T01:01:30Z")));
        }
    }
}
