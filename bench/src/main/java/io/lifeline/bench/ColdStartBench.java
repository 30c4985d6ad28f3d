package io.lifeline.bench;

import io.lifeline.agent.NewAgent;
import io.lifeline.local.LocalDynamo;
import io.lifeline.local.SamTemplate;
import io.lifeline.store.AgentStore;
import java.io.BufferedReader;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
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
        try (LocalDynamo server = LocalDynamo.start(null); DynamoDbClient dynamo = server.client()) {
            LocalDynamo.ensureTable(dynamo, SamTemplate.bundled(), "cold");
            AgentStore agents = new AgentStore(dynamo, "cold");
            agents.register(new NewAgent("bench", "cold-1", "cold", "bench", null, Duration.ofSeconds(60), 2, null, null),
                    Instant.now());
            agents.join("bench", "cold-1", Instant.now());
            String cp = classes + java.io.File.pathSeparator + JAR;
            List<Long> handler = new ArrayList<>();
            List<Long> handlerInit = new ArrayList<>();
            List<Long> bare = new ArrayList<>();
            for (int i = 0; i < n; i++) {
                long[] h = child(cp, ColdStartHandlerMain.class, server.endpoint().toString(), "cold", "bench", "cold-1");
                handler.add(h[0]);
                handlerInit.add(h[1]);
                bare.add(child(cp, ColdStartBareMain.class, server.endpoint().toString(), "cold", "TEAM#bench",
                        "AGENT#cold-1")[0]);
            }
            double h = median(handler);
            double b = median(bare);
            r.add("4", "fresh JVM to first answered heartbeat (median of " + n + ")", h, "ms",
                    "minimal handler: client + 1 UpdateItem", b, "<= 1.3x", h <= 1.3 * b);
            r.add("4", "handler init (client + handler built, median)", median(handlerInit), "ms", "-", null);
        }
    }

    /** Runs a main in a fresh JVM; answers {wall ms to READY, the child's init ms}. */
    private static long[] child(String cp, Class<?> main, String... args) throws Exception {
        List<String> command = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-XX:+TieredCompilation", "-XX:TieredStopAtLevel=1", "-cp", cp, main.getName()));
        command.addAll(List.of(args));
        long start = System.nanoTime();
        Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
        try (BufferedReader out = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8))) {
            String line;
            while ((line = out.readLine()) != null) {
                if (line.startsWith("READY ")) {
                    long wall = (System.nanoTime() - start) / 1_000_000;
                    String[] parts = line.split(" ");
                    p.waitFor(30, TimeUnit.SECONDS);
                    return new long[] {wall, Long.parseLong(parts[1])};
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
