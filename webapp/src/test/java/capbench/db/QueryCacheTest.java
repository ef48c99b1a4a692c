package capbench.db;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class QueryCacheTest {

    private static final QueryCache.Key READ = new QueryCache.Key(true, 41, 100);

    @Test
    void offItHoldsNothingAndCountsNothing() {
        QueryCache off = QueryCache.of(0, 60);
        off.put(READ, List.<Object[]>of(new Object[] {1L}));
        assertFalse(off.on());
        assertNull(off.get(READ));
        assertEquals(0, off.hits() + off.misses() + off.entries());
    }

    @Test
    void aReadIsAnsweredFromTheCacheOnceKeptAndCounted() {
        QueryCache cache = QueryCache.of(10, 60);
        assertNull(cache.get(READ));
        Object[] row = {7L, "12.50"};
        cache.put(READ, List.<Object[]>of(row));
        assertSame(row, cache.get(READ).get(0));
        assertNull(cache.get(new QueryCache.Key(false, 41, 100)), "the unjoined read is another read");
        assertNull(cache.get(new QueryCache.Key(true, 42, 100)), "so is another start");
        assertEquals(1, cache.hits());
        assertEquals(3, cache.misses());
        assertEquals(1, cache.entries());
        assertTrue(cache.on());
    }

    @Test
    void aSizeBelowZeroOrATtlBelowOneSecondIsRefused() {
        assertThrows(IllegalArgumentException.class, () -> QueryCache.of(-1, 60));
        assertThrows(IllegalArgumentException.class, () -> QueryCache.of(10, 0));
    }

    @Test
    void theCacheSettingsAreRequiredLikeThePools() {
        Map<String, String> env = Map.of("DB_POOL_SIZE", "10", "DB_POOL_TIMEOUT_MS", "30000",
                "DB_CONNECTION_SCOPE", "call", "DB_CACHE_TTL_S", "60");
        IllegalStateException refused = assertThrows(IllegalStateException.class, () -> DatabaseSettings.from(env));
        assertTrue(refused.getMessage().startsWith("DB_CACHE_SIZE is not set"), refused.getMessage());
        DatabaseSettings settings = DatabaseSettings.from(Map.of("DB_POOL_SIZE", "10", "DB_POOL_TIMEOUT_MS", "30000",
                "DB_CONNECTION_SCOPE", "call", "DB_CACHE_SIZE", "500", "DB_CACHE_TTL_S", "60"));
        assertEquals(500, settings.cacheSize());
        assertEquals(60, settings.cacheTtlSeconds());
    }
}
