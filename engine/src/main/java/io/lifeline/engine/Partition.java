package io.lifeline.engine;

/**
 * A partition key placed in scan order: by a hash of the value (unsigned), then by the value. Parallel Scan's
 * segments are contiguous ranges of the hash, so each item is in exactly one segment.
 *
 * @param hash the value's hash
 * @param key the partition key's value
 */
record Partition(int hash, Key key) implements Comparable<Partition> {
    static Partition of(Key key) {
        int h = key.hashCode() * 0x9E3779B1;
        return new Partition(h ^ (h >>> 15), key);
    }

    /** Which of {@code total} segments holds this partition. */
    int segment(int total) {
        return (int) (((hash & 0xffffffffL) * total) >>> 32);
    }

    /** Written out: the record's generated equals was a tenth of a point write's time. */
    @Override
    public boolean equals(Object o) {
        return o instanceof Partition p && hash == p.hash && key.equals(p.key);
    }

    @Override
    public int hashCode() {
        return hash;
    }

    @Override
    public int compareTo(Partition o) {
        int c = Integer.compareUnsigned(hash, o.hash);
        return c != 0 ? c : key.compareTo(o.key);
    }
}
