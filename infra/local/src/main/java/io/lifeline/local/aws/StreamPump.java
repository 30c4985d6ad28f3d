package io.lifeline.local.aws;

import com.amazonaws.services.lambda.runtime.RequestHandler;
import com.amazonaws.services.lambda.runtime.events.DynamodbEvent;
import com.amazonaws.services.lambda.runtime.events.StreamsEventResponse;
import io.lifeline.local.runtime.FunctionHost;
import io.lifeline.local.runtime.LocalContext;
import io.lifeline.local.runtime.OwnerOnly;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.TreeMap;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Future;
import java.util.concurrent.SynchronousQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import software.amazon.awssdk.services.dynamodb.model.ExpiredIteratorException;
import software.amazon.awssdk.services.dynamodb.model.GetRecordsResponse;
import software.amazon.awssdk.services.dynamodb.model.Record;
import software.amazon.awssdk.services.dynamodb.model.Shard;
import software.amazon.awssdk.services.dynamodb.model.ShardIteratorType;
import software.amazon.awssdk.services.dynamodb.model.TrimmedDataAccessException;
import software.amazon.awssdk.services.dynamodb.streams.DynamoDbStreamsClient;

/**
 * What Lambda's DynamoDB event source mapping does, for Local: reads the table's stream shard by shard and
 * invokes the stream functions with real {@link DynamodbEvent}s. With ReportBatchItemFailures, a reported
 * record and everything after it is delivered again on the next poll. Progress per shard is checkpointed
 * (in the data directory when there is one), so a restart resumes after the last record handled.
 *
 * <p>What a pass costs the store: the shard list is read once and again only when a shard ends (or every
 * {@link #SHARD_LIST_MAX_AGE}), each shard keeps the iterator its last read answered (a new one from the checkpoint only
 * after a hand-back, a failure or an expired iterator), so a pass over a caught-up shard is one GetRecords. Shards are
 * pumped at once, each by one thread and in its own order, a child only after its parent is read to the end (as Lambda
 * does), so one item's records are never reordered.
 */
public final class StreamPump {
    private static final int BATCH_SIZE = 100;
    /** How long the shard list is trusted when no shard has ended (a new shard follows a closed one). */
    static final Duration SHARD_LIST_MAX_AGE = Duration.ofSeconds(10);
    /** At most this many shards are pumped at once (beyond that, the calling thread pumps the next itself). */
    private static final int SHARD_THREADS = 4;

    private final DynamoDbStreamsClient streams;
    private final String streamArn;
    private final List<Consumer> consumers;
    private final Path checkpointFile;
    /** Shard id -> sequence number of the last record every consumer handled. */
    private final Map<String, String> checkpoints = new ConcurrentHashMap<>();
    private final Map<String, Boolean> finishedShards = new ConcurrentHashMap<>();
    private final Map<String, Long> invocations = new ConcurrentHashMap<>();
    private final Map<String, Long> recordsDelivered = new ConcurrentHashMap<>();
    private final AtomicLong recordsRead = new AtomicLong();
    /** Shard id -> the iterator the shard's last read answered (where the next read starts), while it is valid. */
    private final Map<String, String> iterators = new ConcurrentHashMap<>();
    /** Calls to the streams API by operation (DescribeStream, GetShardIterator, GetRecords, GetRecords.empty). */
    private final Map<String, AtomicLong> calls = new ConcurrentHashMap<>();
    private final Object checkpointFileLock = new Object();
    /** Runs the consumers, so each shard's next page is read while its current one is handled. */
    private final ExecutorService deliveries = new ThreadPoolExecutor(0, SHARD_THREADS, 30, TimeUnit.SECONDS,
            new SynchronousQueue<>(), r -> {
                Thread t = new Thread(r, "stream-pump-deliver");
                t.setDaemon(true);
                return t;
            }, new ThreadPoolExecutor.CallerRunsPolicy());
    private volatile List<Shard> shards;
    private volatile long shardsReadAtNanos;
    private volatile Observer observer;
    private final ExecutorService shardThreads = new ThreadPoolExecutor(0, SHARD_THREADS - 1, 30, TimeUnit.SECONDS,
            new SynchronousQueue<>(), r -> {
                Thread t = new Thread(r, "stream-pump-shard");
                t.setDaemon(true);
                return t;
            }, new ThreadPoolExecutor.CallerRunsPolicy());

    public StreamPump(DynamoDbStreamsClient streams, String streamArn,
                      List<Consumer> consumers, Path checkpointFile)
            throws IOException {
        this.streams = streams;
        this.streamArn = streamArn;
        this.consumers = consumers;
        this.checkpointFile = checkpointFile;
        if (checkpointFile != null && Files.exists(checkpointFile)) {
            Properties p = new Properties();
            try (InputStream in = Files.newInputStream(checkpointFile)) {
                p.load(in);
            }
            p.forEach((k, v) -> checkpoints.put(k.toString(), v.toString()));
        }
    }

    /** What one pass did: records read from the stream (heartbeats included) and records the consumers accepted. */
    public record Pass(int read, int delivered) {
    }

    /** Delivers every record available now; returns how many records the consumers accepted. */
    public int pumpOnce() {
        return pass().delivered();
    }

    /**
     * Delivers every record available now, the open shards at once (each in its own order); answers what was read and
     * delivered, so a caller can poll again soon while records flow.
     */
    public synchronized Pass pass() {
        List<Shard> known = shards();
        Set<String> listed = new HashSet<>();
        known.forEach(sh -> listed.add(sh.shardId()));
        List<Shard> open = new ArrayList<>();
        for (Shard shard : known) {
            String parent = shard.parentShardId();
            // An item's older records are in the parent shard: a child is read only once its parent is read to the end
            // (or gone from the stream), as Lambda does, so shards at once never reorder one item's records.
            boolean parentPending = parent != null && listed.contains(parent) && !finishedShards.containsKey(parent);
            if (!finishedShards.containsKey(shard.shardId()) && !parentPending) {
                open.add(shard);
            }
        }
        if (open.size() == 1) {
            return pumpShard(open.get(0));
        }
        List<Future<Pass>> running = new ArrayList<>();
        for (Shard shard : open) {
            running.add(shardThreads.submit(() -> pumpShard(shard)));
        }
        int read = 0;
        int delivered = 0;
        RuntimeException failure = null;
        for (Future<Pass> f : running) {
            try {
                Pass p = f.get();
                read += p.read();
                delivered += p.delivered();
            } catch (ExecutionException e) {
                failure = e.getCause() instanceof RuntimeException re ? re : new IllegalStateException(e.getCause());
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                failure = new IllegalStateException("interrupted while pumping", e);
            }
        }
        if (failure != null) {
            throw failure;
        }
        return new Pass(read, delivered);
    }

    /** The stream's shards: read again when a shard ended, or when the list is older than SHARD_LIST_MAX_AGE. */
    private List<Shard> shards() {
        List<Shard> known = shards;
        if (known == null || System.nanoTime() - shardsReadAtNanos > SHARD_LIST_MAX_AGE.toNanos()) {
            known = describe();
        }
        return known;
    }

    private List<Shard> describe() {
        count("DescribeStream");
        List<Shard> fresh = streams.describeStream(d -> d.streamArn(streamArn)).streamDescription().shards();
        shards = fresh;
        shardsReadAtNanos = System.nanoTime();
        return fresh;
    }

    /** Sees each batch the pump delivers (for benchmarks that time the outbox's stages); null: none. */
    public void observe(Observer observer) {
        this.observer = observer;
    }

    /**
     * A batch handed to a consumer: its records (after the filter), when the read that brought them returned, when the
     * consumer was invoked and when it returned (epoch ms).
     */
    public interface Observer {
        void delivered(String functionId, List<Record> records, long readAtMillis, long invokedAtMillis,
                       long returnedAtMillis);
    }

    /** Calls the pump made to the streams API, by operation ({@code GetRecords.empty}: reads that found nothing). */
    public Map<String, Long> streamCalls() {
        Map<String, Long> out = new TreeMap<>();
        calls.forEach((k, v) -> out.put(k, v.get()));
        return out;
    }

    private void count(String operation) {
        calls.computeIfAbsent(operation, k -> new AtomicLong()).incrementAndGet();
    }

    /**
     * Skips every record available now without delivering it, as the stream's 24-hour retention drops records a
     * stalled consumer never read; answers how many were lost. For tests of what the outbox repair restores.
     */
    public synchronized int discardPending() {
        int lost = 0;
        iterators.clear();
        for (Shard shard : describe()) {
            String iterator = iteratorAfterCheckpoint(shard);
            while (iterator != null) {
                String current = iterator;
                count("GetRecords");
                GetRecordsResponse page = streams.getRecords(g -> g.shardIterator(current).limit(BATCH_SIZE));
                if (page.records().isEmpty()) {
                    break;
                }
                lost += page.records().size();
                checkpoint(shard.shardId(), page.records().get(page.records().size() - 1).dynamodb().sequenceNumber());
                iterator = page.nextShardIterator();
            }
        }
        return lost;
    }

    /**
     * An iterator from just after the shard's checkpoint, or from its trim horizon when it has none, or when the
     * checkpoint is past the stream's retention (a data dir reopened after more than 24 hours): as Lambda goes on from
     * the oldest record kept; what was trimmed unread, the outbox repair restores.
     */
    private String iteratorAfterCheckpoint(Shard shard) {
        String last = checkpoints.get(shard.shardId());
        count("GetShardIterator");
        try {
            return streams.getShardIterator(g -> {
                g.streamArn(streamArn).shardId(shard.shardId());
                if (last == null) {
                    g.shardIteratorType(ShardIteratorType.TRIM_HORIZON);
                } else {
                    g.shardIteratorType(ShardIteratorType.AFTER_SEQUENCE_NUMBER).sequenceNumber(last);
                }
            }).shardIterator();
        } catch (TrimmedDataAccessException trimmed) {
            count("GetShardIterator");
            return streams.getShardIterator(g -> g.streamArn(streamArn).shardId(shard.shardId())
                    .shardIteratorType(ShardIteratorType.TRIM_HORIZON)).shardIterator();
        }
    }

    /** Pumps until a pass delivers nothing; for tests that want the outbox caught up. */
    public int drain() {
        int total = 0;
        for (int n = pumpOnce(); n > 0; n = pumpOnce()) {
            total += n;
        }
        return total;
    }

    /**
     * Reads one shard until it is caught up, from the iterator its last read answered (or from the checkpoint), and
     * delivers each page in order. The next page is read while the consumers handle the one before it (one page ahead,
     * as Lambda's poller reads while a batch runs); a hand-back or a failure drops that page and the kept iterator, so
     * the next pass starts at the checkpoint.
     */
    private Pass pumpShard(Shard shard) {
        String shardId = shard.shardId();
        String iterator = iterators.remove(shardId);
        if (iterator == null) {
            iterator = iteratorAfterCheckpoint(shard);
        }
        int read = 0;
        int delivered = 0;
        Future<Integer> inFlight = null;
        List<Record> inFlightRecords = null;
        while (true) {
            GetRecordsResponse page = null;
            if (iterator != null) {
                String current = iterator;
                count("GetRecords");
                try {
                    page = streams.getRecords(g -> g.shardIterator(current).limit(BATCH_SIZE));
                } catch (ExpiredIteratorException expired) {
                    if (inFlight == null) {
                        iterator = iteratorAfterCheckpoint(shard);
                        continue;
                    }
                    // The page in flight decides where the next read starts: the checkpoint after it.
                }
            }
            long readAt = System.currentTimeMillis();
            if (inFlight != null) {
                int accepted = await(inFlight);
                delivered += accepted;
                if (accepted > 0) {
                    checkpoint(shardId, inFlightRecords.get(accepted - 1).dynamodb().sequenceNumber());
                }
                if (accepted < inFlightRecords.size() || page == null && iterator != null) {
                    return new Pass(read, delivered); // the page read ahead is dropped; the next pass re-reads
                }
                inFlight = null;
            }
            if (page == null) {
                finishShard(shardId);
                return new Pass(read, delivered);
            }
            List<Record> records = page.records();
            if (records.isEmpty()) {
                count("GetRecords.empty");
                if (page.nextShardIterator() == null) {
                    finishShard(shardId);
                } else {
                    iterators.put(shardId, page.nextShardIterator());
                }
                return new Pass(read, delivered);
            }
            read += records.size();
            recordsRead.addAndGet(records.size());
            inFlightRecords = records;
            inFlight = deliveries.submit(() -> deliver(records, readAt));
            iterator = page.nextShardIterator();
        }
    }

    private static int await(Future<Integer> delivery) {
        try {
            return delivery.get();
        } catch (ExecutionException e) {
            throw e.getCause() instanceof RuntimeException re ? re : new IllegalStateException(e.getCause());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while delivering stream records", e);
        }
    }

    /** A closed shard read to its end: never read again, and the list is read anew for the shard that follows it. */
    private void finishShard(String shardId) {
        finishedShards.put(shardId, true);
        shards = null;
    }

    /**
     * Invokes every consumer with the records its filter passes (none passing: not invoked, as Lambda does);
     * returns how many leading records all of them accepted.
     */
    private int deliver(List<Record> records, long readAtMillis) {
        int accepted = records.size();
        for (Consumer consumer : consumers) {
            List<Record> passed = records.stream().filter(consumer.filter()::passes).toList();
            if (passed.isEmpty()) {
                continue;
            }
            invocations.merge(consumer.functionId(), 1L, Long::sum);
            recordsDelivered.merge(consumer.functionId(), (long) passed.size(), Long::sum);
            DynamodbEvent event = StreamEvents.toEvent(passed, streamArn);
            StreamsEventResponse response;
            long invokedAt = System.currentTimeMillis();
            try {
                response = consumer.handler().handleRequest(event,
                        new LocalContext("stream", UUID.randomUUID().toString()));
                Observer o = observer;
                if (o != null) {
                    o.delivered(consumer.functionId(), passed, readAtMillis, invokedAt, System.currentTimeMillis());
                }
            } catch (RuntimeException e) {
                System.err.println("stream consumer failed, the batch will be retried: " + e);
                return 0;
            }
            if (response != null && response.getBatchItemFailures() != null) {
                for (StreamsEventResponse.BatchItemFailure f : response.getBatchItemFailures()) {
                    for (int i = 0; i < records.size(); i++) {
                        if (records.get(i).dynamodb().sequenceNumber().equals(f.getItemIdentifier())) {
                            accepted = Math.min(accepted, i);
                        }
                    }
                }
            }
        }
        return accepted;
    }

    private void checkpoint(String shardId, String sequenceNumber) {
        checkpoints.put(shardId, sequenceNumber);
        if (checkpointFile == null) {
            return;
        }
        synchronized (checkpointFileLock) {
            writeCheckpoints();
        }
    }

    private void writeCheckpoints() {
        Properties p = new Properties();
        p.putAll(checkpoints);
        try {
            Path tmp = checkpointFile.resolveSibling(checkpointFile.getFileName() + ".tmp");
            Files.deleteIfExists(tmp); // made afresh, its owner's only (0600) from the first byte
            try (OutputStream out = Files.newOutputStream(OwnerOnly.file(tmp))) { // as the file it replaces
                p.store(out, "Lifeline Local stream checkpoints: shard -> last sequence number handled");
            }
            Files.move(tmp, checkpointFile, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
        } catch (IOException e) {
            throw new IllegalStateException("Cannot write " + checkpointFile, e);
        }
    }

    /** A stream function: its handler and its event source mapping's filter. */
    public record Consumer(String functionId, RequestHandler<DynamodbEvent, StreamsEventResponse> handler,
                           StreamFilter filter) {
    }

    /** The host's stream functions, each with the FilterCriteria its mapping declares in template.yaml. */
    public static List<Consumer> consumers(FunctionHost host) {
        List<Consumer> out = new ArrayList<>();
        host.streamConsumers().forEach(id -> out.add(new Consumer(id, host.handler(id),
                StreamFilter.of(host.function(id).streamFilters()))));
        return out;
    }

    /** How many times the pump invoked the function (batches its filter passed at least one record of). */
    public long invocations(String functionId) {
        return invocations.getOrDefault(functionId, 0L);
    }

    /** How many records the function was given (after its filter), replays included. */
    public long recordsDelivered(String functionId) {
        return recordsDelivered.getOrDefault(functionId, 0L);
    }

    /** How many records the pump read from the stream, replays included. */
    public long recordsRead() {
        return recordsRead.get();
    }
}
