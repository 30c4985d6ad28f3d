package io.lifeline.engine;

import io.lifeline.engine.expr.Ast;
import io.lifeline.engine.expr.Documents;
import io.lifeline.engine.expr.Evaluator;
import io.lifeline.engine.expr.Names;
import io.lifeline.engine.expr.Parser;
import io.lifeline.engine.expr.Path;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;
import software.amazon.awssdk.services.dynamodb.model.GetItemRequest;
import software.amazon.awssdk.services.dynamodb.model.GetItemResponse;
import software.amazon.awssdk.services.dynamodb.model.QueryRequest;
import software.amazon.awssdk.services.dynamodb.model.QueryResponse;
import software.amazon.awssdk.services.dynamodb.model.ScanRequest;
import software.amazon.awssdk.services.dynamodb.model.ScanResponse;
import software.amazon.awssdk.services.dynamodb.model.Select;

/**
 * GetItem, Query and Scan. A page stops at Limit items read or once the items read reach 1 MB (before the filter,
 * <a href="https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/Query.Pagination.html">Paginating
 * table query results</a>), and then carries the key of the last item read as LastEvaluatedKey, even when no item
 * follows (so the next page may be empty, as on DynamoDB). The caller holds the engine's lock.
 */
final class Reads {
    static final long PAGE = 1024 * 1024;
    private final Engine engine;

    Reads(Engine engine) {
        this.engine = engine;
    }

    GetItemResponse get(Table t, GetItemRequest r) {
        Names names = new Names(r.expressionAttributeNames(), null);
        List<Path> projection = r.projectionExpression() == null ? null
                : checkedProjection(r.projectionExpression(), names);
        names.requireAllUsed();
        Checks.key(t, r.key());
        Map<String, AttributeValue> item = t.get(r.key());
        boolean consistent = Boolean.TRUE.equals(r.consistentRead());
        Units units = new Units(t.name, r.returnConsumedCapacity(), true);
        units.addTable(Units.readUnits(item == null ? 0 : Values.itemSize(item), consistent));
        GetItemResponse.Builder b = GetItemResponse.builder().consumedCapacity(units.result());
        if (item != null) {
            b.item(projection == null ? item : Documents.project(item, projection));
        }
        return b.build();
    }

    static List<Path> checkedProjection(String text, Names names) {
        List<Path> paths = Parser.projection(text, names);
        for (int i = 0; i < paths.size(); i++) {
            for (int j = 0; j < i; j++) {
                if (paths.get(i).overlaps(paths.get(j))) {
                    throw Errors.validation("Invalid ProjectionExpression: Two document paths overlap with each "
                            + "other; must remove or rewrite one of these paths; path one: " + paths.get(j)
                            + ", path two: " + paths.get(i));
                }
            }
        }
        return paths;
    }

    /** What a Query or Scan shares: the source (table or index), filter, projection and page state. */
    private static final class Page {
        final Table table;
        final Table.Index index;
        final Sorted source;
        Ast.Condition filter;
        List<Path> projection;
        boolean count;
        int limit = Integer.MAX_VALUE;
        long bytes;
        int scanned;
        final List<Map<String, AttributeValue>> items = new ArrayList<>();
        Map<String, AttributeValue> last;
        boolean full;

        Page(Table table, String indexName, Boolean consistent) {
            this.table = table;
            if (indexName != null) {
                index = table.indexes.get(indexName);
                if (index == null) {
                    throw Errors.validation("The table does not have the specified index: " + indexName);
                }
                if (Boolean.TRUE.equals(consistent)) {
                    throw Errors.validation("Consistent reads are not supported on global secondary indexes");
                }
                source = index.entries;
            } else {
                index = null;
                source = table.items;
            }
        }

        /** Reads one entry; answers false once the page is full. */
        boolean read(Sorted.Entry e) {
            Map<String, AttributeValue> item = index == null ? e.item() : table.project(index, e.item());
            scanned++;
            bytes += index == null ? e.bytes() : Values.itemSize(item);
            if (filter == null || Evaluator.test(filter, item)) {
                items.add(projection == null ? item : Documents.project(item, projection));
            }
            last = item;
            full = scanned >= limit || bytes >= PAGE;
            return !full;
        }

        Map<String, AttributeValue> lastKey() {
            if (!full || last == null) {
                return null;
            }
            Map<String, AttributeValue> k = table.keyOf(last);
            if (index != null) {
                k.put(index.hash, last.get(index.hash));
                if (index.range != null) {
                    k.put(index.range, last.get(index.range));
                }
            }
            return k;
        }

        Partition partitionOf(Map<String, AttributeValue> item) {
            return index == null ? table.partition(item) : table.indexPartition(index, item);
        }

        Sorted.Position positionOf(Map<String, AttributeValue> item) {
            return index == null ? table.position(item) : table.indexPosition(index, item);
        }

        /** Checks an ExclusiveStartKey: the table's key, plus the index's key on an index. */
        void checkStart(Map<String, AttributeValue> start) {
            List<String> want = new ArrayList<>(table.keyNames());
            if (index != null) {
                want.add(index.hash);
                if (index.range != null) {
                    want.add(index.range);
                }
            }
            boolean ok = start.keySet().containsAll(want) && want.containsAll(start.keySet());
            for (String k : start.keySet()) {
                ok = ok && Values.type(start.get(k)).equals(table.types.get(k));
            }
            if (!ok) {
                throw Errors.validation("The provided starting key is invalid: The provided key element does not "
                        + "match the schema");
            }
        }
    }

    private void options(Page p, String filter, String projection, Integer limit, Select select, Names names,
            String kind) {
        if (filter != null) {
            p.filter = Parser.condition(filter, "FilterExpression", names);
        }
        if (projection != null) {
            p.projection = checkedProjection(projection, names);
        }
        if (limit != null) {
            if (limit < 1) {
                throw Errors.validation("1 validation error detected: Value '" + limit + "' at 'limit' failed to "
                        + "satisfy constraint: Member must have value greater than or equal to 1");
            }
            p.limit = limit;
        }
        if (select == Select.COUNT) {
            if (projection != null) {
                throw Errors.validation("Cannot specify the AttributesToGet or ProjectionExpression when choosing "
                        + "to get only the COUNT");
            }
            p.count = true;
        } else if (select != null && select != Select.ALL_ATTRIBUTES && select != Select.SPECIFIC_ATTRIBUTES
                && select != Select.ALL_PROJECTED_ATTRIBUTES) {
            throw Errors.unsupported(kind + " Select " + select);
        }
        if (p.index != null && !p.index.projection.equals("ALL") && (select == Select.ALL_ATTRIBUTES)) {
            throw Errors.validation("One or more parameter values were invalid: Select type ALL_ATTRIBUTES is not "
                    + "supported for global secondary index " + p.index.name + " because its projection type is not ALL");
        }
        if (select == Select.SPECIFIC_ATTRIBUTES && projection == null) {
            throw Errors.validation("One or more parameter values were invalid: Select type SPECIFIC_ATTRIBUTES "
                    + "requires a ProjectionExpression");
        }
        names.requireAllUsed();
    }

    QueryResponse query(QueryRequest r) {
        Legacy.refuse(r.hasKeyConditions() || r.hasQueryFilter() || r.hasAttributesToGet(),
                "KeyConditions, QueryFilter or AttributesToGet", r.conditionalOperator() != null);
        Table t = engine.table(r.tableName());
        Page p = new Page(t, r.indexName(), r.consistentRead());
        if (r.keyConditionExpression() == null) {
            throw Errors.validation("Either the KeyConditions or KeyConditionExpression parameter must be specified "
                    + "in the request.");
        }
        Names names = new Names(r.expressionAttributeNames(), r.expressionAttributeValues());
        Checks.values(r.expressionAttributeValues());
        KeyCondition kc = KeyCondition.of(Parser.condition(r.keyConditionExpression(), "KeyConditionExpression",
                names), p.index == null ? t.hash : p.index.hash, p.index == null ? t.range : p.index.range);
        kc.checkTypes(t.types.get(p.index == null ? t.hash : p.index.hash),
                t.types.get(p.index == null ? t.range : p.index.range));
        options(p, r.filterExpression(), r.projectionExpression(), r.limit(), r.select(), names, "Query");
        if (p.filter != null) {
            kc.refuseInFilter(p.filter, t, p.index);
        }
        Partition part = Partition.of(new Key(kc.hashValue()));
        boolean forward = !Boolean.FALSE.equals(r.scanIndexForward());
        Sorted.Position after = null;
        if (r.hasExclusiveStartKey()) {
            p.checkStart(r.exclusiveStartKey());
            if (!Values.same(r.exclusiveStartKey().get(p.index == null ? t.hash : p.index.hash), kc.hashValue())) {
                throw Errors.validation("The provided starting key is outside query boundaries based on provided "
                        + "conditions");
            }
            after = p.positionOf(r.exclusiveStartKey());
        }
        for (Iterator<Sorted.Entry> it = p.source.within(part, after, forward); it.hasNext(); ) {
            Sorted.Entry e = it.next();
            int where = kc.where(e.position().first(), forward);
            if (where > 0) {
                break;
            }
            if (where == 0 && !p.read(e)) {
                break;
            }
        }
        Units units = new Units(t.name, r.returnConsumedCapacity(), true);
        record(units, p, Boolean.TRUE.equals(r.consistentRead()));
        QueryResponse.Builder b = QueryResponse.builder().count(p.items.size()).scannedCount(p.scanned)
                .consumedCapacity(units.result());
        if (!p.count) {
            b.items(p.items);
        }
        Map<String, AttributeValue> lek = p.lastKey();
        return (lek == null ? b : b.lastEvaluatedKey(lek)).build();
    }

    private static void record(Units units, Page p, boolean consistent) {
        double u = Units.readUnits(p.bytes, consistent);
        if (p.index == null) {
            units.addTable(u);
        } else {
            units.addIndex(p.index.name, u);
        }
    }

    ScanResponse scan(ScanRequest r) {
        Legacy.refuse(r.hasScanFilter() || r.hasAttributesToGet(), "ScanFilter or AttributesToGet",
                r.conditionalOperator() != null);
        Table t = engine.table(r.tableName());
        Page p = new Page(t, r.indexName(), r.consistentRead());
        Names names = new Names(r.expressionAttributeNames(), r.expressionAttributeValues());
        Checks.values(r.expressionAttributeValues());
        options(p, r.filterExpression(), r.projectionExpression(), r.limit(), r.select(), names, "Scan");
        int total = 1;
        int segment = 0;
        if (r.totalSegments() != null || r.segment() != null) {
            if (r.totalSegments() == null || r.segment() == null) {
                throw Errors.validation("The TotalSegments parameter is required but was not present in the request "
                        + "when Segment parameter is present");
            }
            total = r.totalSegments();
            segment = r.segment();
            if (total < 1 || total > 1_000_000 || segment < 0 || segment >= total) {
                throw Errors.validation("The Segment parameter is zero-based and must be less than parameter "
                        + "TotalSegments: Segment: " + segment + " is not less than TotalSegments: " + total);
            }
        }
        long low = ((long) segment << 32) / total + ((((long) segment << 32) % total) == 0 ? 0 : 1);
        Partition startPart = new Partition((int) low, Key.NONE);
        Sorted.Position startPos = null;
        if (r.hasExclusiveStartKey()) {
            p.checkStart(r.exclusiveStartKey());
            startPart = p.partitionOf(r.exclusiveStartKey());
            startPos = p.positionOf(r.exclusiveStartKey());
        }
        scanParts(p, p.source.from(startPart, startPos), total, segment);
        Units units = new Units(t.name, r.returnConsumedCapacity(), true);
        record(units, p, Boolean.TRUE.equals(r.consistentRead()));
        ScanResponse.Builder b = ScanResponse.builder().count(p.items.size()).scannedCount(p.scanned)
                .consumedCapacity(units.result());
        if (!p.count) {
            b.items(p.items);
        }
        Map<String, AttributeValue> lek = p.lastKey();
        return (lek == null ? b : b.lastEvaluatedKey(lek)).build();
    }

    private static void scanParts(Page p, Iterator<Sorted.Entry> entries, int total, int segment) {
        while (entries.hasNext()) {
            Sorted.Entry e = entries.next();
            int at = e.partition().segment(total);
            if (at > segment) {
                return;
            }
            if (at == segment && !p.read(e)) {
                return;
            }
        }
    }

    /** Copies an item map (answers never share the engine's maps with callers that might cast and change them). */
    static Map<String, AttributeValue> copy(Map<String, AttributeValue> item) {
        return item == null ? null : new LinkedHashMap<>(item);
    }
}
