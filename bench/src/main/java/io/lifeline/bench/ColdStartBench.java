package io.lifeline.bench;

import io.lifeline.agent.NewAgent;
import io.lifeline.engine.Engine;
import io.lifeline.engine.endpoint.Endpoint;
import io.lifeline.local.template.LocalTables;
import io.lifeline.local.template.SamTemplate;
import io.lifeline.store.agent.AgentStore;
import io.lifeline.store.agent.AgentWrites;
import java.io.BufferedReader;
import java.io.File;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.TimeUnit;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;

/**
 * Figure 4: cold start. Each run is a fresh JVM on the deployment jar alone (functions/target/lifeline-functions.jar,
 * plus the two tiny mains copied out of this jar): the heartbeat handler built as Lambda builds it and one
 * heartbeat answered, against a minimal handler (a DynamoDbClient and one UpdateItem) in the same way. Wall
 * time is from process start to the answer, measured by this process; init is the child's own figure. Without
 * SnapStart: this is the cost SnapStart's restore avoids, not what a restored function pays.
 */
final class ColdStartBench {
    static final Path JAR = Path.of("functions/target/lifeline-functions.jar");

    private ColdStartBench() {
    }

    static void run(Report r, int n) throws Exception {
        if (!Files.exists(JAR)) {
            r.note("figure 4: " + JAR + " not found; run from the repo root after mvn package");
            return;
        }
        double jarMb = Files.size(JAR) / 1_000_000.0;
        r.add("4", "deployment jar size", jarMb, "MB", "<= 15 MB", jarMb <= 15);
        Path classes = Files.createTempDirectory("lifeline-cold");
        for (Class<?> main : List.of(ColdStartHandlerMain.class, ColdStartBareMain.class)) {
            String resource = main.getName().replace('.', '/') + ".class";
            Path target = classes.resolve(resource);
            Files.createDirectories(target.getParent());
            try (InputStream in = ColdStartBench.class.getClassLoader().getResourceAsStream(resource)) {
                Files.copy(in, target);
            }
        }
        Engine engine = new Engine(Clock.systemUTC());
        try (Endpoint server = Endpoint.start(engine, 0)) {
            DynamoDbClient dynamo = engine.client();
            LocalTables tables = LocalTables.named(SamTemplate.bundled(), "cold");
            tables.ensure(dynamo, SamTemplate.bundled());
            AgentStore agents = new AgentStore(dynamo, tables.tables());
            agents.register(new NewAgent("bench", "cold-1", "cold", "bench", null, Duration.ofSeconds(60), 2, null, null),
                    Instant.now());
            new AgentWrites(dynamo, tables.tables()).join("bench", "cold-1", Instant.now());
            String cp = classes + File.pathSeparator + JAR;
            List<Long> handler = new ArrayList<>();
            List<Long> handlerInit = new ArrayList<>();
            List<Long> bare = new ArrayList<>();
            for (int i = 0; i < n; i++) {
                long[] h = child(cp, ColdStartHandlerMain.class, server.uri().toString(), "cold", "bench", "cold-1");
                handler.add(h[0]);
                handlerInit.add(h[1]);
                bare.add(child(cp, ColdStartBareMain.class, server.uri().toString(), tables.tables().live(),
                        "TEAM#bench#AGENT#cold-1", "AGENT")[0]);
            }
            double h = median(handler);
            double b = median(bare);
            r.add("4", "fresh JVM to first answered heartbeat (median of " + n + ")", h, "ms",
                    "minimal handler: client + 1 UpdateItem", b, "<= 1.3x", h <= 1.3 * b);
            r.add("4", "handler init (client + handler built, median)", median(handlerInit), "ms", "-", null);
            runtimes(r, n, cp, server.uri().toString());
        }
    }

    /**
     * Figure 4b, for the choice of Lambda runtime and JIT flags (docs/design/deploy-and-cost/decisions.md): the same
     * heartbeat handler on each JDK named by {@code -Dlifeline.coldJavaHomes=home1,home2} (default: the running one),
     * with C1 only ({@code TieredStopAtLevel=1}, what the template sets) and with full tiered compilation: the wall
     * time to the first answer, and then 1,000 more heartbeats against the engine's endpoint, whose time is mostly
     * the store's but shows what the flags cost a warm container.
     */
    private static void runtimes(Report r, int n, String cp, String endpoint) throws Exception {
        String homes = System.getProperty("lifeline.coldJavaHomes", System.getProperty("java.home"));
        record Variant(String label, String java, List<String> flags, List<Long> first, List<Long> warm) {
        }
        List<Variant> variants = new ArrayList<>();
        for (String home : homes.split(",")) {
            String java = Path.of(home, "bin", "java").toString();
            String version = home;
            Process v = new ProcessBuilder(java, "-version").redirectErrorStream(true).start();
            try (BufferedReader out = new BufferedReader(new InputStreamReader(v.getInputStream(), StandardCharsets.UTF_8))) {
                String line = out.readLine();
                if (line != null) {
                    version = line.replaceAll(".*version \"([0-9]+).*", "$1");
                }
            }
            v.waitFor(30, TimeUnit.SECONDS);
            variants.add(new Variant("Java " + version + ", C1 only", java,
                    List.of("-XX:+TieredCompilation", "-XX:TieredStopAtLevel=1"), new ArrayList<>(), new ArrayList<>()));
            variants.add(new Variant("Java " + version + ", full tiered", java, List.of(), new ArrayList<>(),
                    new ArrayList<>()));
        }
        // Interleaved, so a machine that gets busier during the run weighs on every variant alike.
        for (int i = 0; i < n; i++) {
            for (Variant v : variants) {
                long[] h = child(v.java(), v.flags(), cp, ColdStartHandlerMain.class, endpoint, "cold", "bench", "cold-1",
                        String.valueOf(WARM_BEATS));
                v.first().add(h[0]);
                v.warm().add(h[2]);
            }
        }
        for (Variant v : variants) {
            r.add("4b", v.label() + ": fresh JVM to first answered heartbeat (median of " + n + ")", median(v.first()),
                    "ms", "-", null);
            r.add("4b", v.label() + ": " + WARM_BEATS + " more heartbeats, warm (median)", median(v.warm()), "ms", "-",
                    null);
        }
    }

    static final int WARM_BEATS = 1_000;

    /** Runs a main in a fresh JVM; answers {wall ms to READY, the child's init ms}. */
    private static long[] child(String cp, Class<?> main, String... args) throws Exception {
        return child(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                List.of("-XX:+TieredCompilation", "-XX:TieredStopAtLevel=1"), cp, main, args);
    }

    /** Answers {wall ms to the first answer, the child's init ms, its warm total ms (0 without one)}. */
    private static long[] child(String java, List<String> flags, String cp, Class<?> main, String... args)
            throws Exception {
        List<String> command = new ArrayList<>(List.of(java));
        command.addAll(flags);
        command.addAll(List.of("-cp", cp, main.getName()));
        command.addAll(List.of(args));
        long start = System.nanoTime();
        Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
        try (BufferedReader out = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8))) {
            String line;
            long warm = 0;
            while ((line = out.readLine()) != null) {
                if (line.startsWith("WARM ")) {
                    warm = Long.parseLong(line.substring(5).trim());
                }
                if (line.startsWith("READY ")) {
                    String[] parts = line.split(" ");
                    // The first answer came at the child's own firstMs after its start; wall time includes JVM boot.
                    long wall = (System.nanoTime() - start) / 1_000_000 - (warm > 0 ? warm : 0);
                    p.waitFor(30, TimeUnit.SECONDS);
                    return new long[] {wall, Long.parseLong(parts[1]), warm};
                }
                if (line.startsWith("FAILED")) {
                    throw new IllegalStateException(main.getSimpleName() + ": " + line);
                }
            }
        } finally {
            p.destroyForcibly();
        }
        throw new IllegalStateException(main.getSimpleName() + " ended without an answer");
    }

    private static double median(List<Long> values) {
        List<Long> sorted = new ArrayList<>(values);
        Collections.sort(sorted);
        return sorted.get(sorted.size() / 2);
    }
}
