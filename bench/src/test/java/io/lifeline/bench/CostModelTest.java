package io.lifeline.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.lifeline.local.template.SamTemplate;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * The cost model's arithmetic, line by line, on the template's own deployment (read from the bundled
 * template.yaml) with the published measurements and the prices in bench/prices.json; and the figures issues 11,
 * 13 and 18 ask for, as that arithmetic gives them.
 */
@Tag("unit")
class CostModelTest {
    private static final Prices PRICES = prices();
    private static final Assumptions ASSUMED = Assumptions.defaults();
    private static final Measures MEASURES = Measures.published();
    private static final Sweep SWEEP = Sweep.PUBLISHED;
    private static final double BEATS = 86_400; // a month of 30 s beats, per agent
    private static final double SWEEPS = 4 * 43_200;

    private static Prices prices() {
        try {
            return Prices.load();
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }

    private static Deployment deployment(boolean full) {
        try {
            return Deployment.fromTemplate(full);
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }

    private static Bill bill(Workload w) {
        return CostModel.bill(w, deployment(false), MEASURES, ASSUMED, PRICES);
    }

    private static Map<String, Double> byItem(Bill b) {
        return b.lines().stream().collect(Collectors.toMap(Line::item, Line::usd));
    }

    private static Bill named(String name) {
        return bill(CostModel.workloads(SWEEP, 0.1, 0.04).stream().filter(w -> w.name().equals(name)).findFirst()
                .orElseThrow());
    }

    @Test
    void deployment_readFromTheTemplate_isItsDefaults() throws Exception {
        Deployment d = deployment(false);
        Deployment full = deployment(true);
        String template = Deployment.template();
        assertEquals("essential", d.alarmSet());
        // SweepNotRunning, Faults, DeliveryDeadLetters, the stage's 429s on the heartbeat routes: one metric each;
        // the heartbeat paths' throttles (API and URL) and the canaries' rollback alarms: the heartbeat functions'
        // live-alias errors (API and URL), their INTERNAL_ERROR rejects, the authorizer's live-alias errors.
        assertEquals(8, d.alarms());
        assertEquals(10, d.alarmMetrics());
        assertEquals(template.split("Type: AWS::CloudWatch::Alarm", -1).length - 1, full.alarms());
        assertTrue(full.alarmMetrics() > full.alarms(), "the metric-math alarms pay for each metric they read");
        assertEquals(0, d.idleMetrics());
        assertFalse(d.sweepTraced() || d.repairTraced() || d.heartbeatTraced(), d.toString());
        assertFalse(d.platformLines(), "SystemLogLevel WARN: no START/END/REPORT lines");
        assertFalse(d.scheduler(), "the sweep's schedule is a rule on the default bus (SAM Type: Schedule)");
        assertEquals(300, d.keyCacheSeconds());
        assertEquals(2_880, d.repairsPerMonth(), 1e-9);
    }

    @Test
    void idleDeployment_paysOnlyTheFixedLines_eachCountedFromItsUnits_andUnderOneDollar() {
        Bill idle = named("idle (0 agents)");
        Map<String, Double> l = byItem(idle);
        assertEquals(1.00, l.get("CloudWatch alarms (essential set: 8 alarms, 10 metrics)"), 1e-12);
        assertEquals(0, l.get("custom metrics published with no agents (0)"));
        assertEquals(0, l.get("sweep clock: the schedule (1 a minute)"), "a scheduled rule costs nothing");
        assertEquals((15 * 43_200 + 43_200 + 2 * 3 * 43_200) * 0.40 / 1e6,
                l.get("sweep clock: SQS (delayed messages for the minute's other sweeps)"), 1e-12);
        assertEquals(SWEEPS * 0.2 / 1e6, l.get("sweep clock: Lambda requests (4 sweeps a minute)"), 1e-12);
        assertEquals(0, l.get("sweep: X-Ray traces"));
        assertEquals(SWEEPS * 413 / 1e9 * 0.50,
                l.get("sweep: log lines (its line; no platform lines at SystemLogLevel WARN)"), 1e-12);
        assertEquals(0, l.get("outbox repair: X-Ray traces"));
        // An empty live table still costs the minimum per segment: 4 x 0.5 RRU a sweep.
        assertEquals(SWEEPS * 2 * 0.125 / 1e6, l.get("sweep: DynamoDB reads (Scan of the live table)"), 1e-12);
        assertEquals(SWEEPS * 0.060 * 1.0 * 1.33334e-5, l.get("sweep: Lambda duration"), 1e-12);
        assertEquals(0, idle.group(Bill.BEATS) + idle.group(Bill.WORK));
        assertEquals(idle.lines().stream().mapToDouble(Line::usd).sum(), idle.total(), 1e-12);
        // Under $1 before the deploy-safety alarms joined the essential set; $0.60 of alarms above it then
        // (docs/design/deploy-and-cost/decisions.md, "Canaries roll back on their own alarms only"), and $0.10 more
        // for the stage's refused heartbeats ("One fleet size sizes every cap").
        assertTrue(idle.total() - 0.70 <= 1.0, "an idle deployment at list prices: " + idle.total());
        Bill full = CostModel.bill(idle.workload(), deployment(true), MEASURES, ASSUMED, PRICES);
        assertEquals((deployment(true).alarmMetrics() - 10) * 0.10, full.total() - idle.total(), 1e-9,
                "the full set differs by its alarm metrics only");
    }

    @Test
    void theUrl_dropsApiGatewaysRequests_andTheAuthorizer_keepingOneKeyLookUpPerKeyAndCachePeriod() {
        Bill url = named("1,000 busy + history, single, URL");
        Bill api = named("1,000 busy + history, single, API");
        assertEquals(0, url.usd("ingress: heartbeat Function URL"));
        assertEquals(1_000 * BEATS * 1.0 / 1e6, api.usd("ingress: API Gateway HTTP API"), 1e-9);
        double lookups = 1_000 * 8_640 * 0.5 * 0.125 / 1e6;
        assertEquals(lookups, url.usd("key look-ups"), 1e-12, "1,000 agents keep one environment: one look-up a key");
        assertEquals(lookups + 1_000 * 8_640 * (0.2 / 1e6 + 0.010 * 1.33334e-5),
                api.usd("authorizer Lambda + its key look-up"), 1e-12);
        // Lambda at the handler's measured 3.47 ms, billed 4 ms at 1 GB.
        assertEquals(1_000 * BEATS * 0.2 / 1e6, url.usd("heartbeat Lambda requests"), 1e-12);
        assertEquals(1_000 * BEATS * 0.004 * 1.33334e-5, url.usd("heartbeat Lambda duration"), 1e-12);
        // Logs: 8.46 B a beat measured through the URL; 7.11 + 18.517 + a 280-byte access log line through the API.
        assertEquals(1_000 * BEATS * 8.46 / 1e9 * 0.50, url.usd("logs: heartbeat lines"), 1e-12);
        assertEquals(1_000 * BEATS * (7.11 + 18.517 + 280) / 1e9 * 0.50,
                api.usd("logs: heartbeat lines + authorizer + access log"), 1e-12);
        assertEquals(0, url.usd("X-Ray traces (heartbeat)"), "HeartbeatTracing PassThrough");
        // The authorizer keeps Tracing Active: 1,000 keys every 300 s is 3.3 runs a second, 1 + 5% of the rest.
        assertEquals(LineItems.tracesPerMonth(1_000 / 300.0, ASSUMED) * 5.0 / 1e6,
                api.usd("X-Ray traces (heartbeat + authorizer)"), 1e-12);
        // A single agent at 30 s through the URL, logs and traces included, at most $0.10 a month.
        assertTrue(url.livenessPerAgent() <= 0.10, "URL: " + url.livenessPerAgent());
        assertTrue(api.livenessPerAgent() - url.livenessPerAgent() > 0.0864, "API Gateway's $0.0864 and more");
    }

    @Test
    void twentyAgents_theBeatsObservabilityLines_areAtMostATenthOfTheirPerAgentCost() {
        Bill twenty = named("20 agents, single, URL");
        double deaths = 20;
        double metricMonths = 3 * (1 - Math.exp(-deaths / 720)) + (1 - Math.exp(-deaths / 720));
        assertEquals(metricMonths * 0.30, twenty.usd("custom metrics the fleet publishes"), 1e-12);
        double beatObservability = twenty.usd("logs: heartbeat lines") + twenty.usd("X-Ray traces (heartbeat)")
                + twenty.usd("custom metrics the fleet publishes");
        assertEquals(beatObservability, twenty.beatObservability(), 1e-12);
        assertTrue(twenty.beatObservability() / 20 <= 0.1 * twenty.totalPerAgent(),
                twenty.beatObservability() / 20 + " vs " + twenty.totalPerAgent());
        assertEquals(twenty.lines().stream().filter(Line::observability).mapToDouble(Line::usd)
                .sum(), twenty.observability(), 1e-12);
    }

    @Test
    void history_addsItsStorage_andNothingToLiveness_whenTheSweepReadsTheSame() {
        Sweep same = new Sweep(0.045, 0.045, 361, 681_207);
        Workload with = Workload.busy("w", 1, true, true, same);
        Workload without = Workload.busy("wo", 1, true, false, same);
        assertEquals(bill(without).liveness(), bill(with).liveness(), 1e-12);
        assertEquals(1_000 * 681_207 / 1e9 * (0.25 + 0.20), bill(with).total() - bill(without).total(), 1e-9);
        // With the published figures (Sweep.PUBLISHED): no more with history, single and batched.
        for (String mode : List.of("single, URL", "batched 10, URL")) {
            assertTrue(named("1,000 busy + history, " + mode).livenessPerAgent()
                    <= named("1,000 busy, no history, " + mode).livenessPerAgent(), mode);
        }
    }

    @Test
    void sweepReads_growWithAgents_atTheMeasuredUnitsPerAgent() {
        Bill b = named("100,000 agents, single, URL");
        assertEquals(SWEEPS * 100_000 * Sweep.PUBLISHED.unitsWithHistory() * 0.125 / 1e6,
                b.usd("sweep: DynamoDB reads (Scan of the live table)"), 1e-9);
    }

    @Test
    void batchOfTen_dividesRequestsAndKeys_butNotWrites() {
        Bill one = named("1,000 busy + history, single, URL");
        Bill ten = named("1,000 busy + history, batched 10, URL");
        assertEquals(one.usd("heartbeat Lambda requests") / 10, ten.usd("heartbeat Lambda requests"), 1e-12);
        assertEquals(one.usd("key look-ups") / 10, ten.usd("key look-ups"), 1e-12);
        assertEquals(1_000 * BEATS * 0.625 / 1e6, one.usd("DynamoDB writes"), 1e-9);
        assertEquals(one.usd("DynamoDB writes"), ten.usd("DynamoDB writes"), 1e-12);
        // A plain batch writes each agent's item: 10 x the handler's time, billed 35 ms.
        assertEquals(1_000 * BEATS / 10 * 0.035 * 1.33334e-5, ten.usd("heartbeat Lambda duration"), 1e-12);
        assertTrue(ten.livenessPerAgent() < one.livenessPerAgent());
    }

    @Test
    void hostLeases_ofTenAnd25_writeOneUnitPerHostBeat_andHostsOfTenCostAtMostTwoCents() {
        Bill ten = named("1,000 busy, host lease of 10, URL");
        Bill many = named("1,000 busy, host lease of 25, URL");
        Bill batched = named("1,000 busy, no history, batched 10, URL");
        assertEquals(1_000 * BEATS / 10 * 0.625 / 1e6, ten.usd("DynamoDB writes"), 1e-12);
        assertEquals(1_000 * BEATS / 25 * 0.625 / 1e6, many.usd("DynamoDB writes"), 1e-12);
        // One UpdateItem a renewal: the handler's single time, billed 4 ms.
        assertEquals(1_000 * BEATS / 10 * 0.004 * 1.33334e-5, ten.usd("heartbeat Lambda duration"), 1e-12);
        assertTrue(ten.livenessPerAgent() < batched.livenessPerAgent());
        assertTrue(many.livenessPerAgent() < ten.livenessPerAgent());
        assertTrue(ten.livenessPerAgent() <= 0.02, "hosts of 10 via the URL: " + ten.livenessPerAgent());
    }

    @Test
    void fleetMetrics_areBilledForTheHoursTheyArePublished() {
        assertEquals(0, LineItems.metricMonths(0));
        assertEquals(1 - Math.exp(-1), LineItems.metricMonths(720), 1e-12);
        assertTrue(LineItems.metricMonths(1e6) > 0.999999);
    }

    @Test
    void xrayTraces_takeTheReservoirThenFivePercent() {
        assertEquals(0.5 * CostUnits.SECONDS_PER_MONTH, LineItems.tracesPerMonth(0.5, ASSUMED), 1e-6);
        assertEquals((1 + 0.05 * 32.3) * CostUnits.SECONDS_PER_MONTH, LineItems.tracesPerMonth(33.3, ASSUMED), 1e-3);
    }

    @Test
    void platformLinesAndTraces_whenTheTemplateTurnsThemOn_areCharged() {
        Deployment d = deployment(false);
        Deployment loud = new Deployment(d.alarmSet(), d.alarms(), d.alarmMetrics(),
                d.idleMetrics(), d.sweepsPerMinute(), d.minSegments(), d.memoryGb(), d.dashboardMemoryGb(),
                d.keyCacheSeconds(), d.sweepTraced(), d.repairTraced(), true, true, d.scheduler(), d.repairsPerMonth(),
                d.archived());
        Workload one = Workload.beats("20", 20, 1, true, SWEEP);
        Bill quiet = CostModel.bill(one, d, MEASURES, ASSUMED, PRICES);
        Bill on = CostModel.bill(one, loud, MEASURES, ASSUMED, PRICES);
        // 20 agents at 30 s: 0.67 requests a second, all within the 1/s reservoir.
        assertEquals(20 * BEATS * 5.0 / 1e6, on.usd("X-Ray traces (heartbeat)"), 1e-9);
        assertEquals(20 * BEATS * (8.46 + 330) / 1e9 * 0.50, on.usd("logs: heartbeat lines + Lambda's"), 1e-12);
        assertTrue(on.total() > quiet.total());
    }

    /**
     * Both concurrency profiles' idle bills, each alarm set: reserved concurrency is free, so they differ by the
     * heartbeat URL's alarm metrics alone (the default profile, unreserved, deploys no URL), and the sets by the full
     * set's extra metrics. BENCHMARKS.md quotes the four figures from one: the bench's idle bill with the URL and the
     * essential set; the other three must be it plus or minus those metrics at the alarm price, and it must be this
     * model's bill on the published measures within a cent (the bench measures the idle sweep's line itself).
     */
    @Test
    void idleDeployment_ofEachProfile_differsByTheUrlsAlarmMetrics_andBenchmarksQuotesBoth() throws Exception {
        Workload idle = named("idle (0 agents)").workload();
        double[][] bills = new double[2][2];
        int[][] metrics = new int[2][2];
        for (int full = 0; full < 2; full++) {
            for (int url = 0; url < 2; url++) {
                Deployment d = Deployment.fromTemplate(full == 1, url == 1);
                metrics[full][url] = d.alarmMetrics();
                bills[full][url] = CostModel.bill(idle, d, MEASURES, ASSUMED, PRICES).total();
            }
            assertEquals(2, metrics[full][1] - metrics[full][0], "the URL's throttles and errors");
            assertEquals(0.20, bills[full][1] - bills[full][0], 1e-9, "reserving costs nothing; the URL's alarms do");
        }
        String benchmarks = Files.readString(Path.of("..", "BENCHMARKS.md")).replaceAll("\\s+", " ");
        Matcher essential = Pattern.compile("idle, `AlarmSet` essential: \\$(\\d+\\.\\d{3}) a month with "
                + "`ConcurrencyProfile` reserved, \\$(\\d+\\.\\d{3}) with unreserved").matcher(benchmarks);
        Matcher full = Pattern.compile("idle, `AlarmSet` full: \\$(\\d+\\.\\d{3}) a month with "
                + "`ConcurrencyProfile` reserved, \\$(\\d+\\.\\d{3}) with unreserved").matcher(benchmarks);
        assertTrue(essential.find() && full.find(), "BENCHMARKS.md quotes both profiles' idle bills, both sets");
        double quoted = Double.parseDouble(essential.group(1));
        assertEquals(bills[0][1], quoted, 0.01, "the bench's idle bill and the model's on the published measures");
        double price = PRICES.alarmPerMonth();
        assertEquals(quoted - (metrics[0][1] - metrics[0][0]) * price, Double.parseDouble(essential.group(2)), 1e-9);
        double fullReserved = quoted + (metrics[1][1] - metrics[0][1]) * price;
        assertEquals(fullReserved, Double.parseDouble(full.group(1)), 1e-9);
        assertEquals(fullReserved - (metrics[1][1] - metrics[1][0]) * price, Double.parseDouble(full.group(2)), 1e-9);
    }

    @Test
    void theTemplateBundledForTheBench_isTheRepositorysTemplate() throws Exception {
        byte[] bundled = Deployment.template().getBytes(StandardCharsets.UTF_8);
        byte[] repo = Files.readAllBytes(Path.of("..", "template.yaml"));
        assertEquals(new String(repo, StandardCharsets.UTF_8), new String(bundled, StandardCharsets.UTF_8));
    }

    @Test
    void hookDrivenAgents_payPerEventRequest_aWriteOnlyPerUncoalescedEvent_andTheirStatusChanges() {
        HookSession h = HookSession.HOOKS;
        assertEquals(2_112, h.turnsPerAgentMonth(), 1e-9);
        assertEquals(2_112 * 23 + 2 * 88, h.eventsPerAgentMonth(), 1e-9);
        assertEquals(2_112 * 2 + 2 * 88, h.changesPerAgentMonth(), 1e-9);
        Bill direct = named("1,000 hook-driven agents, direct, URL");
        Bill daemon = named("1,000 hook-driven agents, daemon, lease of 10");
        double events = 1_000 * h.eventsPerAgentMonth();
        assertEquals(events * 0.2 / 1e6, direct.usd("heartbeat Lambda requests"), 1e-6);
        assertEquals(1_000 * h.writesPerAgentMonth() * 0.625 / 1e6, direct.usd("DynamoDB writes (hook events"), 1e-6);
        assertEquals(direct.usd("publisher per change: Lambda"), daemon.usd("publisher per change: Lambda"), 1e-9,
                "a status change costs the same however it arrives");
        System.out.printf("hook-driven agent-month: direct liveness %.4f total %.4f; daemon liveness %.4f total %.4f%n",
                direct.livenessPerAgent(), direct.totalPerAgent(), daemon.livenessPerAgent(), daemon.totalPerAgent());
        assertTrue(direct.totalPerAgent() <= 0.15, "direct: " + direct.totalPerAgent());
    }

    /**
     * A repeat the coalescing condition refuses is billed a write unit; it reaches the table only from an environment
     * that did not make the agent's last write. 1,000 hook-driven agents keep one environment busy (no refusal); a
     * million keep about 65, and nearly every repeat is refused and billed.
     */
    @Test
    void hookRepeats_refusedByTheItemsCondition_areBilled_asTheEnvironmentsGrow() {
        HookSession h = HookSession.HOOKS;
        Bill small = named("1,000 hook-driven agents, direct, URL");
        assertEquals(0, small.usd("DynamoDB writes refused by the coalescing condition"), 1e-12);
        Workload big = new Workload("1,000,000 hook-driven agents", 1_000_000,
                CostUnits.SECONDS_PER_MONTH / h.eventsPerAgentMonth(), 1, true, 0, 0, SWEEP.itemBytes(),
                SWEEP.unitsWithoutHistory(), 1, 0, 0, h.writesPerAgentMonth() / h.eventsPerAgentMonth(),
                h.changesPerAgentMonth(), true);
        Bill bill = LineItems.bill(big, deployment(false), MEASURES, ASSUMED, PRICES);
        double events = 1_000_000 * h.eventsPerAgentMonth();
        double repeats = events - 1_000_000 * h.writesPerAgentMonth();
        double environments = LineItems.environments(events, MEASURES.heartbeatMillis());
        assertTrue(environments > 10, "environments " + environments);
        assertEquals(repeats * (1 - 1 / environments) * PRICES.wruPerMillion() / 1e6,
                bill.usd("DynamoDB writes refused by the coalescing condition"), 1e-6);
        assertTrue(bill.usd("DynamoDB writes refused by the coalescing condition")
                > bill.usd("DynamoDB writes (hook events"), "the refused repeats outnumber the writes");
    }

    /**
     * The open dashboard reads the changes every poll and a page every fifth, never the whole team: a team of 100,000
     * costs what a team of 100 does when idle, about 19 read units a poll where the whole team was 50,000.
     */
    @Test
    void theDashboard_readsAPageAndTheChanges_notTheWholeTeam() {
        double idle = DashboardPoll.readUnits(100_000, 0);
        assertEquals(DashboardPoll.readUnits(100, 0), idle, 1e-9);
        assertEquals(4.5 + 1 + (50 + 1 + 1.5 + 4.5 + 4 * 3) / 5.0, idle, 1e-9);
        assertEquals(idle + 1_000 * 0.507 * 4 / 5, DashboardPoll.readUnits(100_000, 1_000), 1e-9,
                "a thousand changes are read back on the four polls in five that ask for changes");
        assertEquals(3.8, DashboardPoll.requests(), 1e-9);
        Line line = named("1,000 busy + history, single, URL").lines().stream()
                .filter(l -> l.item().startsWith("dashboard open")).findFirst().orElseThrow();
        assertTrue(line.basis().contains("every fifth"), line.basis());
    }

    /**
     * 1,000,000 agents beating alone every 30 s: refused under the caps the template set before FleetSize and under
     * the default FleetSize's, each refusal naming the caps that bind (the tightest first) with their figures; priced
     * under FleetSize 1000000's caps, read from the template's FleetCaps.
     */
    @Test
    void aMillionAgents_areRefusedUnderTheDefaultCaps_namingThem_andPricedUnderTheirFleetSize() throws Exception {
        Workload url = named("1,000,000 agents, single, URL").workload();
        Workload api = CostModel.workloads(SWEEP, 0.1, 0.04).stream()
                .filter(w -> w.name().equals("1,000,000 agents, single, API")).findFirst().orElseThrow();
        Deployment d = deployment(false);
        JsonNode template = SamTemplate.read(Path.of("..", "template.yaml")).tree();
        FleetSizing.Caps byDefault = FleetSizing.fromTemplate(template,
                Integer.parseInt(template.at("/Parameters/FleetSize/Default").asText()));
        FleetSizing.Caps before = FleetSizing.Caps.BEFORE_FLEET_SIZE;

        Unservable viaUrl = assertThrows(Unservable.class,
                () -> CostModel.bill(url, d, MEASURES, ASSUMED, PRICES, before));
        assertEquals(List.of("HeartbeatUrlFunction reserved concurrency"), caps(viaUrl));
        Shortfall binds = viaUrl.shortfalls().get(0);
        assertEquals(50, binds.figure());
        assertEquals(500, binds.servesRps(), 1e-9, "10 x 50: Lambda's rps rule, not concurrency / duration");
        assertEquals(33_333.3, binds.needsRps(), 0.1);
        assertTrue(viaUrl.getMessage().contains("HeartbeatUrlFunction reserved concurrency 50 serves 500"),
                viaUrl.getMessage());

        Unservable viaApi = assertThrows(Unservable.class,
                () -> CostModel.bill(api, d, MEASURES, ASSUMED, PRICES, before));
        // The tightest first: the route's 1,000/s, then the heartbeat function's 2,000/s (10 x 200), then the
        // authorizer's 1,000 keys/s against 3,333 (a million keys every 300 s).
        assertEquals(List.of("heartbeat route ThrottlingRateLimit", "HeartbeatFunction reserved concurrency",
                "AuthorizerFunction reserved concurrency"), caps(viaApi));
        assertEquals(1_000, viaApi.shortfalls().get(2).servesRps(), 1e-9);
        assertEquals(3_333.3, viaApi.shortfalls().get(2).needsRps(), 0.1);

        for (Workload w : List.of(url, api)) {
            Unservable refused = assertThrows(Unservable.class,
                    () -> CostModel.bill(w, d, MEASURES, ASSUMED, PRICES, byDefault));
            System.out.println("FleetSize default: " + refused.getMessage());
            System.out.println("before FleetSize: " + assertThrows(Unservable.class,
                    () -> CostModel.bill(w, d, MEASURES, ASSUMED, PRICES, before)).getMessage());
            FleetSizing.Caps sized = FleetSizing.fromTemplate(template, 1_000_000);
            assertEquals(List.of(), FleetCaps.shortfalls(w, d, MEASURES, ASSUMED, sized));
            Bill b = CostModel.bill(w, d, MEASURES, ASSUMED, PRICES, sized);
            assertEquals(b.total(), CostModel.bill(w, d, MEASURES, ASSUMED, PRICES).total(), 1e-9,
                    "a bill without caps is priced under the FleetSize the fleet needs");
            assertEquals(1_000_000 * BEATS * 0.625 / 1e6, b.usd("DynamoDB writes"), 1e-6);
            System.out.printf("%s, FleetSize 1000000: $%.4f per agent-month (liveness $%.4f); $%,.0f a month%n",
                    w.name(), b.totalPerAgent(), b.livenessPerAgent(), b.total());
            b.lines().forEach(l -> System.out.printf("    %-9s %-78s %12.2f  %s%n", l.group(), l.item(), l.usd(),
                    l.basis()));
        }
        // The same million in daemons' batches of 10 is a 100,000 fleet in requests: the default caps refuse it too.
        Workload batched = named("1,000,000 agents, batched 10, URL").workload();
        assertEquals(100_000, FleetSizing.classFor(FleetCaps.equivalentAgents(batched)));
        assertThrows(Unservable.class, () -> CostModel.bill(batched, d, MEASURES, ASSUMED, PRICES, byDefault));
    }

    private static List<String> caps(Unservable e) {
        return e.shortfalls().stream().map(Shortfall::cap).toList();
    }
}
