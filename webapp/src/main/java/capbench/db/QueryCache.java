package capbench.db;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import java.time.Duration;
import java.util.List;

/**
 * The node's cache of /query's reads (Caffeine; seed 004 put Ehcache in front of its database): a read of the
 * same rows from the same start is answered from the node's heap while it is younger than the TTL, without a
 * connection or a statement. Off (size 0), every read goes to the database. What it keeps is the rows
 * themselves, so its heap is what a real cache of these results would cost.
 */
public final class QueryCache {

    /** What identifies a read: the statement (joined or not), its first order id and how many rows. */
    public record Key(boolean join, int start, int rows) {
    }

    private final Cache<Key, List<Object[]>> cache;  // null when off
    private final int size;

    private QueryCache(int size, long ttlSeconds) {
        this.size = size;
        this.cache = size == 0 ? null : Caffeine.newBuilder()
                .maximumSize(size)
                .expireAfterWrite(Duration.ofSeconds(ttlSeconds))
                .recordStats()
                .build();
    }

    /** A cache of at most {@code size} reads (0: none) kept {@code ttlSeconds} each. */
    public static QueryCache of(int size, long ttlSeconds) {
        if (size < 0 || ttlSeconds < 1) {
            throw new IllegalArgumentException("cache size " + size + " (at least 0), TTL " + ttlSeconds
                    + " s (at least 1)");
        }
        return new QueryCache(size, ttlSeconds);
    }

    public boolean on() {
        return cache != null;
    }

    /** The rows of a read made earlier and still fresh, or null (a miss, or no cache). */
    public List<Object[]> get(Key key) {
        return cache == null ? null : cache.getIfPresent(key);
    }

    public void put(Key key, List<Object[]> rows) {
        if (cache != null) {
            cache.put(key, List.copyOf(rows));
        }
    }

    public long hits() {
        return cache == null ? 0 : cache.stats().hitCount();
    }

    public long misses() {
        return cache == null ? 0 : cache.stats().missCount();
    }

    public long entries() {
        return cache == null ? 0 : cache.estimatedSize();
    }

    public int maximumSize() {
        return size;
    }
}
