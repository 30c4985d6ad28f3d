package io.lifeline.local.app;

import io.lifeline.agent.LifelineException;
import io.lifeline.agent.Limits;
import io.lifeline.local.aws.LocalEventBus;
import io.lifeline.local.template.LocalTables;
import io.lifeline.local.template.SamTemplate;
import io.lifeline.store.team.KeyStore;
import io.lifeline.store.dynamo.Tables;
import io.lifeline.support.Log;
import java.nio.file.Path;
import java.time.Clock;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import software.amazon.awssdk.http.urlconnection.UrlConnectionHttpClient;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;

/**
 * {@code java -jar lifeline-local.jar [--port N] [--data-dir DIR | --in-memory]}, the bootstrap commands
 * {@code create-team} and {@code create-operator-key} (for Local's data dir, or a deployed table), and
 * {@code dynamodb} (Lifeline's DynamoDB engine alone as an endpoint: {@link DynamoDbCommand}). A refusal the
 * user can fix (a data dir another process holds, a port in use, an unknown parameter) is one line on stderr and
 * a non-zero exit, never a stack trace.
 */
@Command(name = "lifeline-local", mixinStandardHelpOptions = true,
        description = {"Runs Lifeline on one machine: the template's functions behind an HTTP front door on "
                + "127.0.0.1, over the project's DynamoDB engine, run inside this process.",
                "Everything it listens on is on 127.0.0.1 (the front door, and the event bus and Step Functions "
                + "stand-ins on free ports); the store has no port. One process per data dir: a running Local "
                + "holds <data-dir>/lock, and a second Local or a bootstrap command on that data dir is refused."},
        subcommands = {LocalMain.CreateTeam.class, LocalMain.CreateOperatorKey.class, DynamoDbCommand.class})
public final class LocalMain implements Callable<Integer> {
    @Option(names = "--port", description = "Port on 127.0.0.1 (default ${DEFAULT-VALUE}; 0 picks a free one)")
    int port = 8787;

    @Option(names = "--data-dir", description = "Where Local keeps its store, keys, stream checkpoints and its lock "
            + "(default ${DEFAULT-VALUE})")
    Path dataDir = Path.of(".lifeline");

    @Option(names = "--in-memory", description = "Keep nothing on disk")
    boolean inMemory;

    @Option(names = "--template", description = "template.yaml to run (default: the one built into this jar)")
    Path template;

    @Option(names = "--time-scale", description = "Multiply state machine waits by this, e.g. 0.1 runs the revive "
            + "flow's 30 s waits in 3 s (default ${DEFAULT-VALUE})")
    double timeScale = 1.0;

    @Option(names = "--demo", description = "Start a team of simulated agents with short timings (stale after 5 s, "
            + "a sweep a second, revive waits x0.1) so every status shows within a minute or two")
    boolean demo;

    @Option(names = "--verbose", description = "Print every log line (by default routine ones are hidden: requests, sweeps and batches that went as usual)")
    boolean verbose;

    @Option(names = "--param", description = "Override a template parameter, e.g. --param StaleAfterSeconds=10 "
            + "(a name the template does not declare is refused)")
    Map<String, String> parameters = new LinkedHashMap<>();

    public static void main(String[] args) {
        System.exit(commandLine().execute(args));
    }

    /** The command line, answering a {@link StartRefusedException} with its one line and exit code 1. */
    public static CommandLine commandLine() {
        return new CommandLine(new LocalMain()).setExecutionExceptionHandler((e, commandLine, parseResult) -> {
            if (e instanceof StartRefusedException) {
                commandLine.getErr().println(e.getMessage());
                commandLine.getErr().flush();
                return 1;
            }
            throw e;
        });
    }

    SamTemplate template() throws Exception {
        return template == null ? SamTemplate.bundled() : SamTemplate.read(template);
    }

    /** What a bootstrap command does with the tables: its exit code. */
    interface TableWork {
        int run(DynamoDbClient dynamo, Tables tables) throws Exception;
    }

    /** The deployed stack's two tables (its LiveTableName and LedgerTableName outputs), for bootstrap commands. */
    static final class AwsTables {
        @Option(names = "--aws-live-table", description = "The deployed stack's LiveTableName output: work on AWS "
                + "(default credentials and region) instead of Local's data dir; give --aws-ledger-table with it")
        String live;

        @Option(names = "--aws-ledger-table", description = "The deployed stack's LedgerTableName output")
        String ledger;

        /** Null when neither is given (Local's own store). */
        Tables tables() throws StartRefusedException {
            if (live == null && ledger == null) {
                return null;
            }
            if (live == null || ledger == null) {
                throw new StartRefusedException("give both --aws-live-table and --aws-ledger-table (the stack's "
                        + "LiveTableName and LedgerTableName outputs)");
            }
            return new Tables(live, ledger);
        }
    }

    /**
     * Runs {@code work} on the deployed tables {@code aws} (default AWS credentials and region), or, when it is
     * null, on Local's own store, which refuses a data dir a running
     * Local holds (one process per data dir).
     */
    int onTables(Tables aws, TableWork work) throws Exception {
        if (aws != null) {
            try (DynamoDbClient dynamo = DynamoDbClient.builder().httpClient(UrlConnectionHttpClient.create()).build()) {
                return work.run(dynamo, aws);
            }
        }
        try (LocalEngine store = LocalEngine.open(inMemory ? null : dataDir, Clock.systemUTC())) {
            DynamoDbClient dynamo = store.client();
            LocalTables tables = LocalTables.named(template(), LifelineLocal.TABLE_PREFIX);
            tables.ensure(dynamo, template());
            return work.run(dynamo, tables.tables());
        }
    }

    /** INFO lines of requests, batches, sweeps and key checks that went as usual. */
    public static boolean routine(String line) {
        return line.startsWith("{\"level\":\"INFO\"") && (line.contains("\"outcome\":\"ok\"")
                || line.startsWith("{\"level\":\"INFO\",\"msg\":\"summary\"")
                || line.contains("\"outcome\":\"idle\"") || line.contains("\"outcome\":\"known_key\""));
    }

    @Override
    public Integer call() throws Exception {
        if (!verbose) {
            // Every invocation logs a JSON line (as in Lambda); on a console, the routine ones drown the rest.
            Log.sink(line -> {
                if (!routine(line)) {
                    System.out.println(line);
                }
            });
        }
        if (!(timeScale > 0)) {
            throw new CommandLine.ParameterException(new CommandLine(this), "--time-scale must be above 0");
        }
        SamTemplate template = template();
        List<String> known = template.parameterNames();
        for (String name : parameters.keySet()) {
            if (!known.contains(name)) {
                throw new StartRefusedException("unknown --param " + name + "; the template's parameters are: "
                        + String.join(", ", known));
            }
        }
        if (demo) {
            parameters.putIfAbsent("StaleAfterSeconds", "5");
            parameters.putIfAbsent("SweepIntervalMillis", "1000");
            if (timeScale == 1.0) {
                timeScale = 0.1;
            }
        }
        LifelineLocal local = LifelineLocal.start(new LifelineLocal.Options(port, inMemory ? null : dataDir,
                template, parameters, Clock.systemUTC(), timeScale, demo));
        CountDownLatch stopped = new CountDownLatch(1);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            try {
                local.close();
            } catch (Exception e) {
                System.err.println("shutdown: " + e);
            }
            stopped.countDown();
        }));
        String url = local.url().toString();
        System.out.println("Lifeline Local is running at " + url + (inMemory ? " (in memory)"
                : " (data in " + dataDir.toAbsolutePath() + ")"));
        if (local.heartbeatUrl() != null) {
            System.out.println("Heartbeat URL (the Function URL's event shape; heartbeats only): "
                    + local.heartbeatUrl());
        }
        System.out.println("Team: " + LifelineLocal.LOCAL_TEAM + "   admin key: " + local.adminKey());
        Path operatorFile = dataDir.resolve(LifelineLocal.OPERATOR_KEY_FILE).toAbsolutePath();
        if (local.operatorKeyNew()) {
            // Shown once (each start when in memory); it creates teams: lifeline create-team NAME.
            System.out.println("Operator key (creates teams; shown once" + (inMemory ? "" : ", kept in "
                    + operatorFile) + "): " + local.operatorKey());
        } else {
            System.out.println("Operator key: in " + operatorFile + " (creates teams: lifeline create-team NAME)");
        }
        for (Map.Entry<String, String> secret : local.webhookSecrets().entrySet()) {
            // What the webhook's receiver compares X-Lifeline-Token with (README, "The restart channel").
            System.out.println(secret.getKey() + " (sent in X-Lifeline-Token): " + secret.getValue());
        }
        System.out.println("Event bus (PutEvents, StartReplay): " + local.bus().endpoint() + "   archive: "
                + LocalEventBus.ARCHIVE_ARN);
        // The key rides in the fragment, which the browser never sends; the page clears it from the address at once.
        System.out.println("Dashboard, signed in as team " + LifelineLocal.LOCAL_TEAM + ": " + url + "/#team="
                + LifelineLocal.LOCAL_TEAM + "&key=" + local.adminKey());
        System.out.println("The CLI, client/target/lifeline.jar (built with this jar by mvn package):");
        System.out.println("  export LIFELINE_URL=" + url + " LIFELINE_TEAM=" + LifelineLocal.LOCAL_TEAM
                + " LIFELINE_API_KEY=" + local.adminKey());
        System.out.println("  java -jar client/target/lifeline.jar agents");
        System.out.println("Try it with curl (after the export line above):");
        System.out.println("  curl -s -X POST " + url + "/v1/teams/local/agents"
                + " -H \"Authorization: Bearer $LIFELINE_API_KEY\""
                + " -d '{\"agentId\":\"agent-1\",\"name\":\"First agent\",\"role\":\"worker\"}'");
        System.out.println("  curl -s -X POST " + url + "/v1/teams/local/agents/agent-1/join"
                + " -H \"Authorization: Bearer $LIFELINE_API_KEY\"");
        System.out.println("  curl -s -X POST " + url + "/v1/teams/local/agents/agent-1/heartbeat"
                + " -H \"Authorization: Bearer $LIFELINE_API_KEY\" -d '{\"status\":\"working\"}'");
        System.out.println("Stop with Ctrl-C.");
        stopped.await();
        return 0;
    }

    /** Creates a team in Local's store and prints its first admin key, once. */
    @Command(name = "create-team", mixinStandardHelpOptions = true,
            description = "Creates a team and prints its first admin key (shown once; only its hash is stored).")
    static final class CreateTeam implements Callable<Integer> {
        @CommandLine.ParentCommand
        LocalMain parent;

        @Parameters(index = "0", description = "Team id: [A-Za-z0-9._-]{1,64}")
        String team;

        @CommandLine.Mixin
        AwsTables aws = new AwsTables();

        @Override
        public Integer call() throws Exception {
            Limits.requireId("team", team);
            return parent.onTables(aws.tables(), this::create);
        }

        private int create(DynamoDbClient dynamo, Tables tables) {
            try {
                KeyStore.NewKey key = new KeyStore(dynamo, tables).createTeam(team, Clock.systemUTC().instant());
                System.out.println("Team " + team + " created. Admin key (shown once, store it now):");
                System.out.println(key.key());
                return 0;
            } catch (LifelineException e) {
                System.err.println(e.getMessage());
                return 1;
            }
        }
    }

    /** Makes an operator key (it creates teams through POST /v1/teams) and prints it once. */
    @Command(name = "create-operator-key", mixinStandardHelpOptions = true,
            description = "Creates an operator key, which may only create teams (POST /v1/teams), and prints it once "
                    + "(only its hash is stored). For Local's data dir it is also written to <data-dir>/operator.key.")
    static final class CreateOperatorKey implements Callable<Integer> {
        @CommandLine.ParentCommand
        LocalMain parent;

        @CommandLine.Mixin
        AwsTables aws = new AwsTables();

        @Option(names = "--label", description = "A note kept with the key (default ${DEFAULT-VALUE})")
        String label = "operator";

        @Override
        public Integer call() throws Exception {
            Tables awsTables = aws.tables();
            if (awsTables == null && parent.inMemory) {
                System.err.println("An in-memory Local makes its own operator key each start; nothing to do.");
                return 2;
            }
            return parent.onTables(awsTables, (dynamo, tables) -> {
                String key = new KeyStore(dynamo, tables).createOperatorKey(label, Clock.systemUTC().instant()).key();
                Path file = awsTables == null ? parent.dataDir.resolve(LifelineLocal.OPERATOR_KEY_FILE) : null;
                if (file != null) {
                    LifelineLocal.writeKeyFile(file, key);
                }
                print(key, file);
                return 0;
            });
        }

        private static void print(String key, Path file) {
            System.out.println("Operator key (shown once, store it now" + (file == null ? ""
                    : "; also in " + file.toAbsolutePath()) + "):");
            System.out.println(key);
        }
    }
}
