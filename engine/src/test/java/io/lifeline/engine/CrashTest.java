package io.lifeline.engine;

import static io.lifeline.engine.Cases.map;
import static io.lifeline.engine.Cases.n;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Clock;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;
import software.amazon.awssdk.services.dynamodb.model.GetRecordsResponse;
import software.amazon.awssdk.services.dynamodb.model.Record;
import software.amazon.awssdk.services.dynamodb.model.ShardIteratorType;
import software.amazon.awssdk.services.dynamodb.streams.DynamoDbStreamsClient;

/**
 * kill -9 loses no acknowledged write: a child JVM ({@link CrashWriter}) writes conditional updates and puts on
 * several threads into a data dir, printing each acknowledged one; the test kills it (SIGKILL) after a random number
 * of acknowledgements, several times, and after each kill opens the dir and looks for every acknowledged write.
 */
@Tag("e2e")
class CrashTest {
    private static final int KILLS = 6;
    private static final int THREADS = 6;
    /** The writer checkpoints every 256 KB of log (every thousand writes or so), so kills land in checkpoints too. */
    private static final long CHECKPOINT_EVERY = 256 * 1024;

    @TempDir
    Path dir;

    @Test
    @Timeout(300)
    void killNineLosesNoAcknowledgedWrite() throws Exception {
        long seed = System.nanoTime();
        System.out.println("crash: random seed " + seed);
        Random random = new Random(seed);
        Map<String, Long> updated = new HashMap<>();
        Set<String> put = new HashSet<>();
        long acknowledged = 0;
        long lost = 0;
        Set<String> streams = new HashSet<>();
        for (int kill = 0; kill < KILLS; kill++) {
            int until = 200 + random.nextInt(3000);
            Process child = start();
            long seen = 0;
            try (BufferedReader in = new BufferedReader(new InputStreamReader(child.getInputStream(),
                    StandardCharsets.UTF_8))) {
                String line = in.readLine();
                assertEquals("ready", line, "the writer did not start");
                while (seen < until && (line = in.readLine()) != null) {
                    String[] f = line.split(" ");
                    record(f, updated, put);
                    seen++;
                }
                // SIGKILL through the process handle, which (unlike Process.destroyForcibly) leaves the pipe open
                // so every acknowledgement the writer printed before it died is still read
                child.toHandle().destroyForcibly();
                assertTrue(child.waitFor(60, TimeUnit.SECONDS), "the writer was not killed");
                while ((line = in.readLine()) != null) {
                    String[] f = line.split(" ");
                    record(f, updated, put);
                    seen++;
                }
            }
            assertEquals(until, Math.min(seen, until), "the writer stopped before it was killed");
            acknowledged += seen;
            lost += lostWrites(updated, put, streams);
        }
        System.out.printf("crash: %d kills, %,d acknowledged writes, %d lost (a checkpoint every %,d bytes of log)%n",
                KILLS, acknowledged, lost, CHECKPOINT_EVERY);
        assertEquals(0, lost);
        assertTrue(acknowledged >= KILLS * 200L);
        assertEquals(1, streams.size(), "the same stream after every kill: " + streams);
    }

    private static void record(String[] f, Map<String, Long> updated, Set<String> put) {
        if (f[0].equals("u")) {
            updated.merge(f[1], Long.parseLong(f[2]), Math::max);
        } else {
            put.add(f[1] + " " + f[2]);
        }
    }

    private Process start() throws IOException {
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        ProcessBuilder pb = new ProcessBuilder(java, "-Xmx256m", "-cp", System.getProperty("java.class.path"),
                CrashWriter.class.getName(), dir.toString(), Integer.toString(THREADS), Long.toString(CHECKPOINT_EVERY));
        pb.redirectError(ProcessBuilder.Redirect.INHERIT);
        return pb.start();
    }

    /**
     * Opens the dir and counts acknowledged writes missing: each thread's counter, and each ledger item put; and checks
     * the stream (its ARN kept in {@code streams}).
     */
    private long lostWrites(Map<String, Long> updated, Set<String> put, Set<String> streams) {
        long lost = 0;
        try (Engine e = Engine.open(dir, Clock.systemUTC())) {
            DynamoDbClient db = e.client();
            streams.add(checkStream(e));
            for (Map.Entry<String, Long> u : updated.entrySet()) {
                Map<String, AttributeValue> item = db.getItem(r -> r.tableName("crash")
                        .key(map("pk", u.getKey(), "sk", n("0")))).item();
                long count = Long.parseLong(item.get("count").n());
                if (count < u.getValue()) {
                    lost += u.getValue() - count;
                }
            }
            for (String p : put) {
                String[] f = p.split(" ");
                Map<String, AttributeValue> item = db.getItem(r -> r.tableName("crash")
                        .key(map("pk", f[0], "sk", n(f[1])))).item();
                if (item == null || item.isEmpty()) {
                    lost++;
                }
            }
        }
        return lost;
    }

    /**
     * The stream after a kill holds each counter's changes since the first run, each once and in order (1, 2, 3 ...),
     * up to the count the table holds: the records of writes the log replayed are there with the rest, and none twice.
     */
    private static String checkStream(Engine e) {
        DynamoDbClient db = e.client();
        DynamoDbStreamsClient streams = e.streamsClient();
        String arn = db.describeTable(r -> r.tableName("crash")).table().latestStreamArn();
        String shard = streams.describeStream(r -> r.streamArn(arn)).streamDescription().shards().get(0).shardId();
        String it = streams.getShardIterator(r -> r.streamArn(arn).shardId(shard)
                .shardIteratorType(ShardIteratorType.TRIM_HORIZON)).shardIterator();
        Map<String, Long> counts = new HashMap<>();
        while (it != null) {
            String current = it;
            GetRecordsResponse page = streams.getRecords(r -> r.shardIterator(current));
            for (Record r : page.records()) {
                Map<String, AttributeValue> image = r.dynamodb().newImage();
                if (image.get("sk").n().equals("0")) {
                    String who = image.get("pk").s();
                    long count = Long.parseLong(image.get("count").n());
                    assertEquals(counts.getOrDefault(who, 0L) + 1, count, "the stream's next change of " + who);
                    counts.put(who, count);
                }
            }
            it = page.records().isEmpty() ? null : page.nextShardIterator();
        }
        for (Map.Entry<String, Long> c : counts.entrySet()) {
            Map<String, AttributeValue> item = db.getItem(r -> r.tableName("crash")
                    .key(map("pk", c.getKey(), "sk", n("0")))).item();
            assertEquals(Long.parseLong(item.get("count").n()), c.getValue(), "the stream ends where the table is");
        }
        return arn;
    }
}
