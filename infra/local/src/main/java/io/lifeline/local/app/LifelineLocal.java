package io.lifeline.local.app;

import io.lifeline.auth.Scope;
import io.lifeline.local.aws.LocalEventBus;
import io.lifeline.local.aws.LocalQueues;
import io.lifeline.local.aws.LocalStepFunctions;
import io.lifeline.local.aws.StreamPump;
import io.lifeline.local.http.FrontDoor;
import io.lifeline.local.http.LocalGateway;
import io.lifeline.local.runtime.FunctionHost;
import io.lifeline.local.runtime.LocalMetrics;
import io.lifeline.local.runtime.OwnerOnly;
import io.lifeline.local.runtime.Scheduler;
import io.lifeline.local.template.LocalTables;
import io.lifeline.local.template.SamTemplate;
import io.lifeline.store.team.KeyStore;
import io.lifeline.store.ledger.RevivalStore;
import io.lifeline.store.dynamo.Tables;
import io.lifeline.support.Json;
import io.lifeline.support.Log;
import java.io.IOException;
import java.net.BindException;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Clock;
import java.time.Duration;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;

/**
 * Lifeline on one machine: the project's DynamoDB engine, the template's functions, the gateway in front of them on
 * 127.0.0.1, and the stream pump feeding the outbox. Everything it runs is read from template.yaml.
 */
public final class LifelineLocal implements AutoCloseable {
    /** Local's tables are {@code lifeline-live} and {@code lifeline-ledger}. */
    public static final String TABLE_PREFIX = "lifeline";
    public static final String LOCAL_TEAM = "local";
    public static final String EVENT_BUS_NAME = LocalEventBus.BUS_NAME;
    public static final String ADMIN_KEY_FILE = "local-admin-key";
    /** Where Local keeps its operator key (0600), for the CLI's {@code create-team}. */
    public static final String OPERATOR_KEY_FILE = "operator.key";
    /** The stream poll when it is quiet: a pass that read nothing waits this long (Lambda polls a shard ~4 times a second). */
    public static final long STREAM_POLL_MILLIS = 100;
    /** The stream poll while records flow: a pass that read anything is followed this soon. */
    public static final long STREAM_POLL_BUSY_MILLIS = 10;

    static {
        // The JDK's HTTP server (the event bus and Step Functions stand-ins) leaves Nagle's algorithm on unless told, and reads
        // the setting once, when its first server starts: small answers then wait for the client's delayed ACK,
        // about 40 ms each on Linux. The bench measured the HTTP heartbeat path at 0.23x bare UpdateItem with it
        // on and 0.75x with it off. A value the user set is kept.
        if (System.getProperty("sun.net.httpserver.nodelay") == null) {
            System.setProperty("sun.net.httpserver.nodelay", "true");
        }
    }

    /**
     * How to start: port 0 picks a free one; a null data dir keeps everything in memory; {@code timeScale}
     * multiplies state machine waits (1 = real time).
     */
    public record Options(int port, Path dataDir, SamTemplate template, Map<String, String> parameters, Clock clock,
                          double timeScale, boolean demo) {
        public Options(int port, Path dataDir, SamTemplate template, Map<String, String> parameters, Clock clock) {
            this(port, dataDir, template, parameters, clock, 1.0, false);
        }

        public Options(int port, Path dataDir, SamTemplate template, Map<String, String> parameters, Clock clock,
                       double timeScale) {
            this(port, dataDir, template, parameters, clock, timeScale, false);
        }
    }

    private final LocalEngine store;
    private final LocalRuntime runtime;
    private final DynamoDbClient dynamo;
    private final Tables tables;
    private final FunctionHost host;
    private final LocalGateway gateway;
    private final StreamPump pump;
    private final FrontDoor frontDoor;
    private final LocalEventBus bus;
    private final LocalStepFunctions stepFunctions;
    private final Scheduler scheduler;
    private final Demo demo;
    private final ScheduledExecutorService background;
    private final String adminKey;
    private final String operatorKey;
    /** The deployed webhooks' generated secrets (logical id to value), kept in the data dir across starts. */
    private final Map<String, String> webhookSecrets;
    /** The functions' metrics as CloudWatch would extract them from their lines (GET /local/metrics). */
    private final LocalMetrics metrics = new LocalMetrics();
    private final boolean operatorKeyNew;

    private LifelineLocal(Options options) throws Exception {
        // In-process, no port; takes the data dir's lock first, so a second Local on it is refused at once.
        store = LocalEngine.open(options.dataDir(), options.clock());
        try {
            refusedIfTaken(() -> {
                FrontDoor.requireFree(options.port());
                return null;
            });
            dynamo = store.client();
            LocalTables tables = LocalTables.named(options.template(), TABLE_PREFIX);
            tables.ensure(dynamo, options.template());
            this.tables = tables.tables();
            Map<String, String> parameters = new HashMap<>(options.parameters());
            // After a restart, the sweep gives every alive agent one full stale-after from now (SweepPlan.afterStart):
            // clients that kept beating while Local was down are not blamed for Local's own outage.
            parameters.put("SweepGraceFromMillis", Long.toString(options.clock().millis()));
            runtime = LocalRuntime.builder().template(options.template()).tables(dynamo, tables)
                    .busName(EVENT_BUS_NAME).clock(options.clock()).parameters(parameters)
                    .stepFunctions(options.timeScale(), true)
                    .streams(store.streamsClient(),
                            tables.streamArn(dynamo),
                            options.dataDir() == null ? null : options.dataDir().resolve(LocalEngine.STREAM_CHECKPOINTS_FILE))
                    .secrets(readSecrets(options))
                    .build();
            Map<String, String> deployed = new LinkedHashMap<>();
            for (Map.Entry<String, String> e : runtime.secrets.entrySet()) {
                if (options.dataDir() != null) {
                    writeKeyFile(options.dataDir().resolve(SECRET_FILE_PREFIX + e.getKey()), e.getValue());
                }
                if (options.template().deployed(e.getKey(), runtime.parameters)) {
                    deployed.put(e.getKey(), e.getValue());
                }
            }
            webhookSecrets = Collections.unmodifiableMap(deployed);
            host = runtime.host;
            bus = runtime.bus;
            stepFunctions = runtime.stepFunctions;
            gateway = runtime.gateway;
            pump = runtime.pump;
            adminKey = ensureLocalTeam(new KeyStore(dynamo, this.tables), options);
            Path operatorFile = options.dataDir() == null ? null : options.dataDir().resolve(OPERATOR_KEY_FILE);
            String existing = existingKey(new KeyStore(dynamo, this.tables), operatorFile);
            operatorKeyNew = existing == null;
            operatorKey = operatorKeyNew ? writeKeyFile(operatorFile, new KeyStore(dynamo, this.tables)
                    .createOperatorKey("Lifeline Local", options.clock().instant()).key()) : existing;
            Log.tap(metrics);
            gateway.serveMetrics(metrics::json);
            frontDoor = refusedIfTaken(() -> new FrontDoor(gateway, options.port()));
            background = Executors.newSingleThreadScheduledExecutor(r -> {
                Thread t = new Thread(r, "stream-pump");
                t.setDaemon(true);
                return t;
            });
            background.schedule(this::pumpQuietly, STREAM_POLL_MILLIS, TimeUnit.MILLISECONDS);
            // A sweep counts as late while a request that reached the front door waits for its answer (FrontDoor).
            scheduler = new Scheduler(host, options.template().schedules(), options.clock(), System::nanoTime,
                    frontDoor::oldestWaitNanos);
            // The sweeps queued between two schedules: delivered when due, late by the same measure.
            runtime.queues.startDelivering(frontDoor::oldestWaitNanos);
            resumeInterruptedRevives(options.template());
            demo = options.demo() ? new Demo(gateway, adminKey) : null;
        } catch (Exception e) {
            store.close();
            throw e;
        }
    }

    /** What binds the front door's port: a port already taken refuses the start, in the front door's one line. */
    private interface Bind<T> {
        T bind() throws IOException;
    }

    private static <T> T refusedIfTaken(Bind<T> bind) throws IOException {
        try {
            return bind.bind();
        } catch (BindException e) {
            throw new StartRefusedException(e.getMessage());
        }
    }

    /**
     * Local keeps state machine executions in memory, so a crash ends the revive flows that were waiting.
     * On start, each agent left {@code restarting} gets its flow again, under the same execution name: the
     * flow's first step recognises its own restarting write (and its claim on the revive), asks the host
     * again and carries on from attempt 1, so the agent ends ready or dead_failed_revive, never stuck.
     */
    private void resumeInterruptedRevives(SamTemplate template) {
        if (template.logicalIds("AWS::Serverless::StateMachine").isEmpty()) {
            return;
        }
        String machine = LocalStepFunctions.arn(template.logicalIds("AWS::Serverless::StateMachine").get(0));
        for (RevivalStore.Pending pending : new RevivalStore(dynamo, tables, Duration.ofDays(30)).pending()) {
            String name = pending.executionId().substring(pending.executionId().lastIndexOf(':') + 1);
            var input = Json.object().put("team", pending.team()).put("agentId", pending.agentId())
                    .put("startSeq", pending.startSeq()).put("hostId", pending.hostId());
            try {
                stepFunctions.start(machine, name, input);
                System.out.println("resumed the revive of " + pending.team() + "/" + pending.agentId()
                        + " interrupted by the last shutdown");
            } catch (RuntimeException e) {
                System.err.println("could not resume the revive of " + pending.team() + "/" + pending.agentId()
                        + ": " + e);
            }
        }
    }

    /** Local names of the template's resources that functions and state machines refer to. */
    public static Map<String, String> resourceNames(SamTemplate template, LocalTables tables, String bus) {
        Map<String, String> names = new HashMap<>(tables.resourceNames());
        names.put(template.eventBusLogicalId(), bus);
        template.logicalIds("AWS::Serverless::Function").forEach(id -> names.put(id, FunctionHost.functionArn(id)));
        template.logicalIds("AWS::Serverless::StateMachine").forEach(id -> names.put(id, LocalStepFunctions.arn(id)));
        template.logicalIds("AWS::SQS::Queue").forEach(id -> names.put(id, LocalQueues.queueUrl(id)));
        return names;
    }

    /** The template's parameters as Local runs them: the overrides, and Local's own defaults. */
    public static Map<String, String> localParameters(Map<String, String> overrides) {
        Map<String, String> p = new HashMap<>(overrides);
        // Local runs the reserved profile, as a production account does: every function's cap is Local's too (so a
        // burst past one is answered as AWS answers it), and the heartbeat URL is served on its own function.
        p.putIfAbsent("ConcurrencyProfile", "reserved");
        return p;
    }

    /** Where a data dir keeps a generated secret of the template (0600), so a host's copy stays right after a restart. */
    public static final String SECRET_FILE_PREFIX = "secret-";

    private static Map<String, String> readSecrets(Options options) throws IOException {
        Map<String, String> out = new HashMap<>();
        if (options.dataDir() == null) {
            return out;
        }
        for (String id : options.template().generatedSecrets()) {
            Path file = options.dataDir().resolve(SECRET_FILE_PREFIX + id);
            if (Files.exists(file)) {
                String value = Files.readString(file).trim();
                if (!value.isEmpty()) {
                    out.put(id, value);
                }
            }
        }
        return out;
    }

    /**
     * The secrets the deployed webhooks send in X-Lifeline-Token (e.g. RestartWebhookSecret when RestartWebhookUrl
     * is set): what a host compares the header with. Kept in the data dir, so they survive a restart.
     */
    public Map<String, String> webhookSecrets() {
        return webhookSecrets;
    }

    public static LifelineLocal start(Options options) throws Exception {
        return new LifelineLocal(options);
    }

    /** One pass, then the next: soon while records flow, after the quiet interval when the stream had nothing. */
    private void pumpQuietly() {
        long next = STREAM_POLL_MILLIS;
        try {
            next = nextPollMillis(pump.pass());
        } catch (RuntimeException e) {
            System.err.println("stream pump: " + e);
        } finally {
            if (!background.isShutdown()) {
                try {
                    background.schedule(this::pumpQuietly, next, TimeUnit.MILLISECONDS);
                } catch (RejectedExecutionException closing) {
                    // Local is closing: no next pass.
                }
            }
        }
    }

    public static long nextPollMillis(StreamPump.Pass pass) {
        return pass.read() > 0 ? STREAM_POLL_BUSY_MILLIS : STREAM_POLL_MILLIS;
    }

    /**
     * The local team's admin key. Keys are stored only as hashes, so Local keeps the plain key in its data
     * directory (readable by its owner only) to print it again after a restart.
     */
    private static String ensureLocalTeam(KeyStore keys, Options options) throws IOException {
        Path keyFile = options.dataDir() == null ? null : options.dataDir().resolve(ADMIN_KEY_FILE);
        if (keys.teamExists(LOCAL_TEAM)) {
            if (keyFile != null && Files.exists(keyFile)) {
                String key = Files.readString(keyFile).trim();
                if (keys.find(key).isPresent()) {
                    return key;
                }
            }
            return writeKeyFile(keyFile, keys.createKey(LOCAL_TEAM, Scope.ADMIN, "Lifeline Local",
                    options.clock().instant()).key());
        }
        return writeKeyFile(keyFile, keys.createTeam(LOCAL_TEAM, options.clock().instant()).key());
    }

    /** The key in {@code file} if the file exists and the store still knows the key; else null. */
    private static String existingKey(KeyStore keys, Path file) throws IOException {
        if (file == null || !Files.exists(file)) {
            return null;
        }
        String key = Files.readString(file).trim();
        return !key.isEmpty() && keys.find(key).isPresent() ? key : null;
    }

    /**
     * Writes a key to {@code file} (null: nowhere) readable by its owner only from the first byte: a temp file
     * created 0600, then renamed over the old one.
     */
    static String writeKeyFile(Path file, String key) throws IOException {
        if (file == null) {
            return key;
        }
        Files.createDirectories(file.toAbsolutePath().getParent());
        Path tmp = file.resolveSibling(file.getFileName() + ".tmp");
        Files.deleteIfExists(tmp);
        OwnerOnly.file(tmp);
        Files.writeString(tmp, key + "\n");
        Files.move(tmp, file, StandardCopyOption.REPLACE_EXISTING,
                StandardCopyOption.ATOMIC_MOVE);
        return key;
    }

    /** The operator key: it creates teams ({@code POST /v1/teams}) and opens nothing else. */
    public String operatorKey() {
        return operatorKey;
    }

    /** True when this start made the operator key (first start of the data dir, or in memory). */
    public boolean operatorKeyNew() {
        return operatorKeyNew;
    }

    public URI url() {
        return URI.create("http://127.0.0.1:" + frontDoor.port());
    }

    /**
     * The heartbeat Function URL's base as Local serves it ({@link LocalGateway#URL_PREFIX}), or null when the
     * template deploys no URL (EnableHeartbeatUrl false, or ConcurrencyProfile unreserved).
     */
    public URI heartbeatUrl() {
        return gateway.functionUrls().contains(HEARTBEAT_URL_FUNCTION)
                ? URI.create(url() + LocalGateway.urlPath(HEARTBEAT_URL_FUNCTION)) : null;
    }

    /** The template's logical id of the function behind the heartbeat Function URL (its own, capped apart). */
    public static final String HEARTBEAT_URL_FUNCTION = "HeartbeatUrlFunction";

    public String adminKey() {
        return adminKey;
    }

    /** The template's functions as Local hosts them (their reserved concurrency and throttles included). */
    public FunctionHost host() {
        return host;
    }

    public LocalGateway gateway() {
        return gateway;
    }

    /** Fault injection (the soak test): every function stops for {@code duration}, as in a long GC pause. */
    public void stopTheWorld(Duration duration) throws InterruptedException {
        host.stopTheWorld(duration);
    }

    /** The tables the functions use. */
    public Tables tables() {
        return tables;
    }

    public StreamPump pump() {
        return pump;
    }

    public DynamoDbClient dynamo() {
        return dynamo;
    }

    public LocalEventBus bus() {
        return bus;
    }

    public LocalStepFunctions stepFunctions() {
        return stepFunctions;
    }

    /** The template's SQS queues: the sweeps queued between two schedules. */
    public LocalQueues queues() {
        return runtime.queues;
    }

    @Override
    public void close() throws Exception {
        Log.untap(metrics);
        if (demo != null) {
            demo.close();
        }
        scheduler.close();
        background.shutdownNow();
        background.awaitTermination(5, TimeUnit.SECONDS);
        frontDoor.close();
        runtime.close();
        store.close();
    }
}
