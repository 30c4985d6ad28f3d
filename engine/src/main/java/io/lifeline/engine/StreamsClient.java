package io.lifeline.engine;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import software.amazon.awssdk.awscore.exception.AwsErrorDetails;
import software.amazon.awssdk.services.dynamodb.model.DescribeStreamRequest;
import software.amazon.awssdk.services.dynamodb.model.DescribeStreamResponse;
import software.amazon.awssdk.services.dynamodb.model.ExpiredIteratorException;
import software.amazon.awssdk.services.dynamodb.model.GetRecordsRequest;
import software.amazon.awssdk.services.dynamodb.model.GetRecordsResponse;
import software.amazon.awssdk.services.dynamodb.model.GetShardIteratorRequest;
import software.amazon.awssdk.services.dynamodb.model.GetShardIteratorResponse;
import software.amazon.awssdk.services.dynamodb.model.ListStreamsRequest;
import software.amazon.awssdk.services.dynamodb.model.ListStreamsResponse;
import software.amazon.awssdk.services.dynamodb.model.Record;
import software.amazon.awssdk.services.dynamodb.model.SequenceNumberRange;
import software.amazon.awssdk.services.dynamodb.model.Shard;
import software.amazon.awssdk.services.dynamodb.model.Stream;
import software.amazon.awssdk.services.dynamodb.model.StreamDescription;
import software.amazon.awssdk.services.dynamodb.model.TrimmedDataAccessException;
import software.amazon.awssdk.services.dynamodb.streams.DynamoDbStreamsClient;
import software.amazon.awssdk.services.dynamodb.streams.DynamoDbStreamsServiceClientConfiguration;

/**
 * The engine's streams as the SDK's {@link DynamoDbStreamsClient}: ListStreams, DescribeStream, GetShardIterator and
 * GetRecords, as the <a href="https://docs.aws.amazon.com/amazondynamodb/latest/APIReference/API_Operations_Amazon_DynamoDB_Streams.html">
 * DynamoDB Streams API reference</a> defines them (those four are the whole API). Each stream has one shard, open
 * while the stream is enabled, closed when it is disabled or its table deleted.
 *
 * <p>An iterator is the stream's ARN and an opaque tail holding where it reads next and when it was given, so the
 * engine keeps no state per iterator; it expires 15 minutes after it was given, as on AWS.
 */
final class StreamsClient implements DynamoDbStreamsClient {
    static final long ITERATOR_MILLIS = Duration.ofMinutes(15).toMillis();
    private static final String SEPARATOR = "|1|";
    private final Engine engine;

    StreamsClient(Engine engine) {
        this.engine = engine;
    }

    @Override
    public String serviceName() {
        return DynamoDbStreamsClient.SERVICE_NAME;
    }

    @Override
    public void close() {
        // nothing to release: the engine lives on
    }

    @Override
    public DynamoDbStreamsServiceClientConfiguration serviceClientConfiguration() {
        return DynamoDbStreamsServiceClientConfiguration.builder().build();
    }

    @Override
    public String toString() {
        return "LifelineEngineStreamsClient";
    }

    /** ListStreams, optionally of one table, paged by ExclusiveStartStreamArn and Limit (1 to 100). */
    @Override
    public ListStreamsResponse listStreams(ListStreamsRequest r) {
        int limit = limit(r.limit(), 100, 100);
        engine.acquire();
        try {
            List<Stream> out = new ArrayList<>();
            boolean started = r.exclusiveStartStreamArn() == null;
            ListStreamsResponse.Builder b = ListStreamsResponse.builder();
            for (StreamLog s : engine.streams.all()) {
                if (!started) {
                    started = s.arn.equals(r.exclusiveStartStreamArn());
                    continue;
                }
                if (r.tableName() != null && !r.tableName().equals(s.tableName)) {
                    continue;
                }
                if (out.size() == limit) {
                    b.lastEvaluatedStreamArn(out.get(limit - 1).streamArn());
                    break;
                }
                out.add(Stream.builder().streamArn(s.arn).tableName(s.tableName).streamLabel(s.label).build());
            }
            return b.streams(out).build();
        } finally {
            engine.release();
        }
    }

    /** DescribeStream: the stream and its one shard. */
    @Override
    public DescribeStreamResponse describeStream(DescribeStreamRequest r) {
        limit(r.limit(), 100, 100);
        engine.acquire();
        try {
            StreamLog s = engine.streams.stream(r.streamArn());
            List<Shard> shards = new ArrayList<>();
            boolean past = s.shardId.equals(r.exclusiveStartShardId()) || r.shardFilter() != null;
            if (!past) {
                SequenceNumberRange.Builder range = SequenceNumberRange.builder()
                        .startingSequenceNumber(Streams.format(s.start));
                if (!s.enabled()) {
                    range.endingSequenceNumber(Streams.format(Math.max(s.end(), s.start)));
                }
                shards.add(Shard.builder().shardId(s.shardId).sequenceNumberRange(range.build()).build());
            }
            StreamDescription d = StreamDescription.builder().streamArn(s.arn).streamLabel(s.label)
                    .streamStatus(s.enabled() ? "ENABLED" : "DISABLED").streamViewType(s.viewType)
                    .creationRequestDateTime(Instant.ofEpochMilli(s.created)).tableName(s.tableName)
                    .keySchema(Describe.schema(s.hash, s.range)).shards(shards).build();
            return DescribeStreamResponse.builder().streamDescription(d).build();
        } finally {
            engine.release();
        }
    }

    /** GetShardIterator: TRIM_HORIZON, LATEST, AT_SEQUENCE_NUMBER or AFTER_SEQUENCE_NUMBER. */
    @Override
    public GetShardIteratorResponse getShardIterator(GetShardIteratorRequest r) {
        engine.acquire();
        try {
            StreamLog s = engine.streams.stream(r.streamArn());
            if (!s.shardId.equals(r.shardId())) {
                throw Errors.notFound("Requested resource not found: Shard does not exist");
            }
            long now = engine.clock.millis();
            s.trim(now);
            String type = String.valueOf(r.shardIteratorTypeAsString());
            long from = switch (type) {
                case "TRIM_HORIZON" -> s.trimmedThrough() + 1;
                case "LATEST" -> s.enabled() ? engine.streams.upcoming() : s.end() + 1;
                case "AT_SEQUENCE_NUMBER" -> sequence(s, r.sequenceNumber());
                case "AFTER_SEQUENCE_NUMBER" -> sequence(s, r.sequenceNumber()) + 1;
                default -> throw Errors.validation("1 validation error detected: Value '" + r.shardIteratorTypeAsString()
                        + "' at 'shardIteratorType' failed to satisfy constraint: Member must satisfy enum value set: "
                        + "[AFTER_SEQUENCE_NUMBER, LATEST, AT_SEQUENCE_NUMBER, TRIM_HORIZON]");
            };
            return GetShardIteratorResponse.builder().shardIterator(iterator(s, from, now)).build();
        } finally {
            engine.release();
        }
    }

    /** A sequence number of the shard, as AT_ and AFTER_SEQUENCE_NUMBER name it. */
    private static long sequence(StreamLog s, String text) {
        long seq = Streams.parse(text);
        if (seq < 0 || seq < s.start || seq > Math.max(s.last(), s.start)) {
            throw Errors.validation("Invalid SequenceNumber " + text + " for shard " + s.shardId + " of stream "
                    + s.arn);
        }
        if (seq <= s.trimmedThrough()) {
            throw trimmed("The sequence number " + text + " is beyond the trim horizon of shard " + s.shardId);
        }
        return seq;
    }

    /** GetRecords: up to Limit (1 to 1000) records and about 1 MB, and the iterator to read on from. */
    @Override
    public GetRecordsResponse getRecords(GetRecordsRequest r) {
        int limit = limit(r.limit(), 1000, 1000);
        String iterator = r.shardIterator();
        int cut = iterator == null ? -1 : iterator.lastIndexOf(SEPARATOR);
        long[] where = cut < 0 ? null : decode(iterator.substring(cut + SEPARATOR.length()));
        if (where == null) {
            throw Errors.validation("Invalid ShardIterator");
        }
        engine.acquire();
        try {
            StreamLog s = engine.streams.stream(iterator.substring(0, cut));
            long now = engine.clock.millis();
            if (now - where[1] > ITERATOR_MILLIS) {
                throw expired("Iterator expired. The iterator was created at time " + Instant.ofEpochMilli(where[1])
                        + " while right now it is " + Instant.ofEpochMilli(now) + " which is further in the future "
                        + "than the tolerated delay of " + ITERATOR_MILLIS + " milliseconds.");
            }
            s.trim(now);
            if (where[0] <= s.trimmedThrough()) {
                throw trimmed("Attempted to access data that has been trimmed from shard " + s.shardId);
            }
            List<Record> records = s.read(where[0], limit);
            long next = records.isEmpty() ? where[0]
                    : Streams.parse(records.get(records.size() - 1).dynamodb().sequenceNumber()) + 1;
            GetRecordsResponse.Builder b = GetRecordsResponse.builder().records(records);
            if (s.enabled() || next <= s.end()) {
                b.nextShardIterator(iterator(s, next, now));
            }
            return b.build();
        } finally {
            engine.release();
        }
    }

    private static String iterator(StreamLog s, long from, long now) {
        String tail = from + ":" + now;
        return s.arn + SEPARATOR + Base64.getUrlEncoder().withoutPadding()
                .encodeToString(tail.getBytes(StandardCharsets.UTF_8));
    }

    /** Where an iterator reads next and when it was given, or null when the tail is not one of the engine's. */
    private static long[] decode(String tail) {
        try {
            String[] parts = new String(Base64.getUrlDecoder().decode(tail), StandardCharsets.UTF_8).split(":");
            return parts.length == 2 ? new long[] {Long.parseLong(parts[0]), Long.parseLong(parts[1])} : null;
        } catch (IllegalArgumentException notOurs) {
            return null;
        }
    }

    private static int limit(Integer given, int max, int otherwise) {
        if (given == null) {
            return otherwise;
        }
        if (given < 1 || given > max) {
            throw Errors.validation("1 validation error detected: Value '" + given + "' at 'limit' failed to satisfy "
                    + "constraint: Member must have value less than or equal to " + max
                    + " and greater than or equal to 1");
        }
        return given;
    }

    private static AwsErrorDetails details(String code, String message) {
        return AwsErrorDetails.builder().errorCode(code).errorMessage(message).serviceName("DynamoDbStreams").build();
    }

    private static ExpiredIteratorException expired(String message) {
        return (ExpiredIteratorException) ExpiredIteratorException.builder().message(message).statusCode(400)
                .awsErrorDetails(details("ExpiredIteratorException", message)).build();
    }

    private static TrimmedDataAccessException trimmed(String message) {
        return (TrimmedDataAccessException) TrimmedDataAccessException.builder().message(message).statusCode(400)
                .awsErrorDetails(details("TrimmedDataAccessException", message)).build();
    }
}
