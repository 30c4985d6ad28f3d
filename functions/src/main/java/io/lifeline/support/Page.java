package io.lifeline.support;

import java.util.List;

/**
 * One page of a list that can be larger than one answer: its items, and the cursor that reads the next page (null
 * when this page is the last). The cursor is opaque to the caller (the store writes and checks it): good only for the
 * team, list and filter that issued it.
 */
public record Page<T>(List<T> items, String cursor) {
    /** The list's default page size, when the caller gives no {@code limit}. */
    public static final int DEFAULT_LIMIT = 100;
    /** The largest page a caller may ask for: a page of agents this size stays far below Lambda's 6 MB answer. */
    public static final int MAX_LIMIT = 1000;

    public Page {
        items = List.copyOf(items);
    }
}
