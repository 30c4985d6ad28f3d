package io.lifeline.client;

import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.NoSuchElementException;
import java.util.function.Function;

/** Following a list route's {@code nextCursor}: page by page as asked, or every page joined. */
final class Pages {
    private Pages() {
    }

    /**
     * The pages {@code read} answers from the first (cursor null), each asked when the iteration reaches it and
     * following the one before's cursor, so a caller that stops early reads no more.
     */
    static <P> Iterable<P> lazily(Function<String, P> read, Function<P, String> nextCursor) {
        return () -> new Iterator<>() {
            private P ahead;
            private String cursor;
            private boolean last;

            @Override
            public boolean hasNext() {
                if (ahead == null && !last) {
                    ahead = read.apply(cursor);
                    cursor = nextCursor.apply(ahead);
                    last = cursor == null;
                }
                return ahead != null;
            }

            @Override
            public P next() {
                if (!hasNext()) {
                    throw new NoSuchElementException("no page after the last");
                }
                P page = ahead;
                ahead = null;
                return page;
            }
        };
    }

    /** Every page {@code read} answers, in turn from the first, its {@code items} joined into one list. */
    static <P, T> List<T> joined(Function<String, P> read, Function<P, List<T>> items,
                                 Function<P, String> nextCursor) {
        List<T> all = new ArrayList<>();
        String cursor = null;
        do {
            P page = read.apply(cursor);
            all.addAll(items.apply(page));
            cursor = nextCursor.apply(page);
        } while (cursor != null);
        return all;
    }
}
