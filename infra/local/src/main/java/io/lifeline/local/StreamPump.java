package io.lifeline.local;

import com.amazonaws.services.lambda.runtime.RequestHandler;
import com.amazonaws.services.lambda.runtime.events.DynamodbEvent;
import com.amazonaws.services.lambda.runtime.events.StreamsEventResponse;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import software.amazon.awssdk.services.dynamodb.model.GetRecordsResponse;
import software.amazon.awssdk.services.dynamodb.model.Record;
import software.amazon.awssdk.services.dynamodb.model.Shard;
import software.amazon.awssdk.services.dynamodb.model.ShardIteratorType;
import software.amazon.awssdk.services.dynamodb.streams.DynamoDbStreamsClient;

/**
 * What Lambda's DynamoDB event source mapping does, for Local: reads the table's stream shard by shard and
 * invokes the stream functions with real {@link DynamodbEvent}s. With ReportBatchItemFailures, a reported
 * record and everything after it is delivered again on the next poll. Progress per shard is checkpointed
 * (in the data directory when there is one), so a restart resumes after the last record handled.
 */
public final class StreamPump {
    private static final int BATCH_SIZE = 100;

    private final DynamoDbStreamsClient streams;
    private final String streamArn;
    private final List<Consumer> consumers;
    private final Path checkpointFile;
    /** Shard id -> sequence number of the last record every consumer handled. */
    private final Map<String, String> checkpoints = new ConcurrentHashMap<>();
    private final Map<String, Boolean> finishedShards = new ConcurrentHashMap<>();
    private final Map<String, Long> invocations = new ConcurrentHashMap<>();
    private final Map<String, Long> recordsDelivered = new ConcurrentHashMap<>();
    private final java.util.concurrent.atomic.AtomicLong recordsRead = new java.util.concurrent.atomic.AtomicLong();

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

    /** Delivers every record available now; returns how many records the consumers accepted. */
    public synchronized int pumpOnce() {
        int delivered = 0;
        for (Shard shard : streams.describeStream(d -> d.streamArn(streamArn)).streamDescription().shards()) {
            if (!finishedShards.containsKey(shard.shardId())) {
                delivered += pumpShard(shard);
            }
        }
        return delivered;
    }

    /**
     * Skips every record available now without delivering it, as the stream's 24-hour retention drops records a
     * stalled consumer never read; answers how many were lost. For tests of what the outbox repair restores.
     */
    public synchronized int discardPending() {
        int lost = 0;
        for (Shard shard : streams.describeStream(d -> d.streamArn(streamArn)).streamDescription().shards()) {
            String iterator = iteratorAfterCheckpoint(shard);
            while (iterator != null) {
                String current = iterator;
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

    /** An iterator from just after the shard's checkpoint, or from its trim horizon when it has none. */
    private String iteratorAfterCheckpoint(Shard shard) {
        String last = checkpoints.get(shard.shardId());
        return streams.getShardIterator(g -> {
            g.streamArn(streamArn).shardId(shard.shardId());
            if (last == null) {
                g.shardIteratorType(ShardIteratorType.TRIM_HORIZON);
            } else {
                g.shardIteratorType(ShardIteratorType.AFTER_SEQUENCE_NUMBER).sequenceNumber(last);
            }
        }).shardIterator();
    }

    /** Pumps until a pass delivers nothing; for tests that want the outbox caught up. */
    public int drain() {
        int total = 0;
        for (int n = pumpOnce(); n > 0; n = pumpOnce()) {
            total += n;
        }
        return total;
    }

    private int pumpShard(Shard shard) {
        String iterator = iteratorAfterCheckpoint(shard);
        int delivered = 0;
        while (iterator != null) {
            String current = iterator;
            GetRecordsResponse page = streams.getRecords(g -> g.shardIterator(current).limit(BATCH_SIZE));
            List<Record> records = page.records();
            if (records.isEmpty()) {
                if (page.nextShardIterator() == null) {
                    finishedShards.put(shard.shardId(), true);
                }
                return delivered;
            }
            recordsRead.addAndGet(records.size());
            int accepted = deliver(records);
            delivered += accepted;
            if (accepted > 0) {
                checkpoint(shard.shardId(), records.get(accepted - 1).dynamodb().sequenceNumber());
            }
            if (accepted < records.size()) {
                return delivered;
            }
            iterator = page.nextShardIterator();
        }
        finishedShards.put(shard.shardId(), true);
        return delivered;
    }

    /**
     * Invokes every consumer with the records its filter passes (none passing: not invoked, as Lambda does);
     * returns how many leading records all of them accepted.
     */
    private int deliver(List<Record> records) {
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
            try {
                response = consumer.handler().handleRequest(event,
                        new LocalContext("stream", UUID.randomUUID().toString()));
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
        Properties p = new Properties();
        p.putAll(checkpoints);
        try {
            Path tmp = checkpointFile.resolveSibling(checkpointFile.getFileName() + ".tmp");
            try (OutputStream out = Files.newOutputStream(OwnerOnly.file(tmp))) { // 0600, as the file it replaces
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
