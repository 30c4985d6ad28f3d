package io.lifeline.local.aws;

import com.amazonaws.services.lambda.runtime.events.DynamodbEvent;
import com.amazonaws.services.lambda.runtime.events.models.dynamodb.StreamRecord;
import com.amazonaws.services.lambda.runtime.events.models.dynamodb.StreamViewType;
import java.util.ArrayList;
import java.util.Date;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import software.amazon.awssdk.core.SdkBytes;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;
import software.amazon.awssdk.services.dynamodb.model.Record;

/** Turns DynamoDB Streams records (SDK v2) into the {@link DynamodbEvent} a Lambda stream trigger receives. */
final class StreamEvents {
    private StreamEvents() {
    }

    static DynamodbEvent toEvent(List<Record> records, String streamArn) {
        List<DynamodbEvent.DynamodbStreamRecord> out = new ArrayList<>();
        for (Record r : records) {
            DynamodbEvent.DynamodbStreamRecord e = new DynamodbEvent.DynamodbStreamRecord();
            e.setEventSourceARN(streamArn);
            e.withEventID(r.eventID()).withEventName(r.eventNameAsString()).withEventVersion(r.eventVersion())
                    .withEventSource("aws:dynamodb").withAwsRegion(r.awsRegion());
            var d = r.dynamodb();
            StreamRecord sr = new StreamRecord()
                    .withKeys(map(d.keys())).withNewImage(map(d.newImage())).withOldImage(map(d.oldImage()))
                    .withSequenceNumber(d.sequenceNumber()).withSizeBytes(d.sizeBytes())
                    .withStreamViewType(d.streamViewType() == null ? null
                            : StreamViewType.valueOf(
                                    d.streamViewTypeAsString()))
                    .withApproximateCreationDateTime(d.approximateCreationDateTime() == null ? null
                            : Date.from(d.approximateCreationDateTime()));
            e.setDynamodb(sr);
            out.add(e);
        }
        DynamodbEvent event = new DynamodbEvent();
        event.setRecords(out);
        return event;
    }

    private static Map<String, com.amazonaws.services.lambda.runtime.events.models.dynamodb.AttributeValue> map( // clash: AttributeValue is imported from software.amazon.awssdk.services.dynamodb.model
            Map<String, AttributeValue> in) {
        if (in == null || in.isEmpty()) {
            return null;
        }
        Map<String, com.amazonaws.services.lambda.runtime.events.models.dynamodb.AttributeValue> out = // clash: AttributeValue is imported from software.amazon.awssdk.services.dynamodb.model
                new LinkedHashMap<>();
        in.forEach((k, v) -> out.put(k, value(v)));
        return out;
    }

    private static com.amazonaws.services.lambda.runtime.events.models.dynamodb.AttributeValue value(AttributeValue v) { // clash: AttributeValue is imported from software.amazon.awssdk.services.dynamodb.model
        var out = new com.amazonaws.services.lambda.runtime.events.models.dynamodb.AttributeValue(); // clash: AttributeValue is imported from software.amazon.awssdk.services.dynamodb.model
        if (v.s() != null) {
            return out.withS(v.s());
        }
        if (v.n() != null) {
            return out.withN(v.n());
        }
        if (v.b() != null) {
            return out.withB(v.b().asByteBuffer());
        }
        if (v.bool() != null) {
            return out.withBOOL(v.bool());
        }
        if (Boolean.TRUE.equals(v.nul())) {
            return out.withNULL(true);
        }
        if (v.hasSs()) {
            return out.withSS(v.ss());
        }
        if (v.hasNs()) {
            return out.withNS(v.ns());
        }
        if (v.hasBs()) {
            return out.withBS(v.bs().stream().map(SdkBytes::asByteBuffer).toList());
        }
        if (v.hasL()) {
            return out.withL(v.l().stream().map(StreamEvents::value).toList());
        }
        if (v.hasM()) {
            return out.withM(map(v.m()) == null ? Map.of() : map(v.m()));
        }
        throw new IllegalArgumentException("Unsupported attribute value " + v);
    }
}
