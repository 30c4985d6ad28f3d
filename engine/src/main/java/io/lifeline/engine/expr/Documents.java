package io.lifeline.engine.expr;

import io.lifeline.engine.Errors;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;

/**
 * Reads and writes values at document paths. Items and their maps and lists are never changed in place: a write
 * copies the maps and lists along its path, so an item a reader holds stays as it was.
 */
public final class Documents {
    private static final String INVALID = "The document path provided in the update expression is invalid for update";

    private Documents() {
    }

    /** The value at {@code path}, or null where the path leads nowhere. */
    public static AttributeValue get(Map<String, AttributeValue> item, Path path) {
        AttributeValue v = item.get(path.root());
        List<Path.Element> els = path.elements();
        for (int i = 1; i < els.size() && v != null; i++) {
            Path.Element e = els.get(i);
            if (e instanceof Path.Name n) {
                v = v.hasM() ? v.m().get(n.name()) : null;
            } else {
                int idx = ((Path.Index) e).index();
                v = v.hasL() && idx < v.l().size() ? v.l().get(idx) : null;
            }
        }
        return v;
    }

    /** Sets {@code value} at {@code path} in a copy of the item; a list index past the end appends. */
    public static Map<String, AttributeValue> set(Map<String, AttributeValue> item, Path path, AttributeValue value) {
        Map<String, AttributeValue> out = new LinkedHashMap<>(item);
        List<Path.Element> els = path.elements();
        if (els.size() == 1) {
            out.put(path.root(), value);
            return out;
        }
        AttributeValue root = item.get(path.root());
        if (root == null) {
            throw Errors.validation(INVALID);
        }
        out.put(path.root(), setIn(root, els, 1, value));
        return out;
    }

    private static AttributeValue setIn(AttributeValue node, List<Path.Element> els, int i, AttributeValue value) {
        Path.Element e = els.get(i);
        boolean last = i == els.size() - 1;
        if (e instanceof Path.Name n) {
            if (!node.hasM()) {
                throw Errors.validation(INVALID);
            }
            Map<String, AttributeValue> m = new LinkedHashMap<>(node.m());
            AttributeValue child = m.get(n.name());
            if (!last && child == null) {
                throw Errors.validation(INVALID);
            }
            m.put(n.name(), last ? value : setIn(child, els, i + 1, value));
            return AttributeValue.fromM(m);
        }
        if (!node.hasL()) {
            throw Errors.validation(INVALID);
        }
        int idx = ((Path.Index) e).index();
        List<AttributeValue> l = new ArrayList<>(node.l());
        if (last) {
            if (idx < l.size()) {
                l.set(idx, value);
            } else {
                l.add(value);
            }
        } else {
            if (idx >= l.size()) {
                throw Errors.validation(INVALID);
            }
            l.set(idx, setIn(l.get(idx), els, i + 1, value));
        }
        return AttributeValue.fromL(l);
    }

    /** Removes what is at {@code path} in a copy of the item; a path that leads nowhere changes nothing. */
    public static Map<String, AttributeValue> remove(Map<String, AttributeValue> item, Path path) {
        List<Path.Element> els = path.elements();
        if (!item.containsKey(path.root())) {
            return item;
        }
        Map<String, AttributeValue> out = new LinkedHashMap<>(item);
        if (els.size() == 1) {
            out.remove(path.root());
            return out;
        }
        AttributeValue changed = removeIn(item.get(path.root()), els, 1);
        if (changed != null) {
            out.put(path.root(), changed);
        }
        return out;
    }

    private static AttributeValue removeIn(AttributeValue node, List<Path.Element> els, int i) {
        Path.Element e = els.get(i);
        boolean last = i == els.size() - 1;
        if (e instanceof Path.Name n) {
            if (!node.hasM() || !node.m().containsKey(n.name())) {
                return node;
            }
            Map<String, AttributeValue> m = new LinkedHashMap<>(node.m());
            if (last) {
                m.remove(n.name());
            } else {
                m.put(n.name(), removeIn(m.get(n.name()), els, i + 1));
            }
            return AttributeValue.fromM(m);
        }
        int idx = ((Path.Index) e).index();
        if (!node.hasL() || idx >= node.l().size()) {
            return node;
        }
        List<AttributeValue> l = new ArrayList<>(node.l());
        if (last) {
            l.remove(idx);
        } else {
            l.set(idx, removeIn(l.get(idx), els, i + 1));
        }
        return AttributeValue.fromL(l);
    }

    /**
     * The item cut down to {@code paths}, as ProjectionExpression answers: maps keep the keys asked for; lists keep
     * the elements asked for, in index order; a path that leads nowhere adds nothing.
     */
    public static Map<String, AttributeValue> project(Map<String, AttributeValue> item, List<Path> paths) {
        if (topLevel(paths)) {
            // the common case (a Scan's or Query's plain attribute names): no tree to build, the values shared
            Map<String, AttributeValue> out = new LinkedHashMap<>();
            for (Path p : paths) {
                AttributeValue v = item.get(p.root());
                if (v != null) {
                    out.put(p.root(), v);
                }
            }
            return out;
        }
        Map<String, Object> tree = new LinkedHashMap<>();
        for (Path p : paths) {
            AttributeValue v = get(item, p);
            if (v != null) {
                insert(tree, p.elements(), 0, v);
            }
        }
        Map<String, AttributeValue> out = new LinkedHashMap<>();
        for (Map.Entry<String, Object> e : tree.entrySet()) {
            out.put(e.getKey(), build(e.getValue()));
        }
        return out;
    }

    private static boolean topLevel(List<Path> paths) {
        for (Path p : paths) {
            if (p.elements().size() != 1) {
                return false;
            }
        }
        return true;
    }

    @SuppressWarnings("unchecked")
    private static void insert(Object node, List<Path.Element> els, int i, AttributeValue v) {
        Path.Element e = els.get(i);
        Object key = e instanceof Path.Name n ? n.name() : (Object) ((Path.Index) e).index();
        Map<Object, Object> map = (Map<Object, Object>) node;
        if (i == els.size() - 1) {
            map.put(key, v);
            return;
        }
        Object child = map.get(key);
        if (!(child instanceof Map)) {
            child = els.get(i + 1) instanceof Path.Name ? new LinkedHashMap<>() : new TreeMap<>();
            map.put(key, child);
        }
        insert(child, els, i + 1, v);
    }

    @SuppressWarnings("unchecked")
    private static AttributeValue build(Object node) {
        if (node instanceof AttributeValue v) {
            return v;
        }
        if (node instanceof TreeMap<?, ?> list) {
            List<AttributeValue> l = new ArrayList<>();
            for (Object o : list.values()) {
                l.add(build(o));
            }
            return AttributeValue.fromL(l);
        }
        Map<String, AttributeValue> m = new LinkedHashMap<>();
        for (Map.Entry<String, Object> e : ((Map<String, Object>) node).entrySet()) {
            m.put(e.getKey(), build(e.getValue()));
        }
        return AttributeValue.fromM(m);
    }
}
