package capbench.db;

import java.nio.file.Path;
import java.util.Map;

/**
 * The node's settings for the shared database: its pool and its cache of reads (tomcat-conf/tunables.env:
 * DB_POOL_SIZE, DB_POOL_TIMEOUT_MS, DB_CONNECTION_SCOPE, DB_CACHE_SIZE, DB_CACHE_TTL_S, checked by
 * cluster/settings.sh before the node starts) and where the database is. The password is never a setting: it is read from a file when the pool is made.
 *
 * @param scope whether a request holds one connection for all its statements or borrows one per statement
 */
public record DatabaseSettings(String jdbcUrl, String user, Path passwordFile, int poolSize, long poolTimeoutMs,
                               Scope scope, int cacheSize, long cacheTtlSeconds) {

    /** How long a request holds a connection (seed 004: BLOCKED in getConnection, fixed by one per request). */
    public enum Scope {
        REQUEST, CALL;

        public String wireName() {
            return name().toLowerCase(java.util.Locale.ROOT);
        }
    }

    /** The settings as the node's environment gives them (compose.yaml, the VM's unit: the pool's three from
     *  tunables.env, already checked); where the database is has defaults, the pool's and the cache's settings
     *  have none here.
     *  Throws IllegalStateException naming a pool setting the environment lacks. */
    public static DatabaseSettings from(Map<String, String> env) {
        return new DatabaseSettings(
                env.getOrDefault("DB_URL", "jdbc:postgresql://database:5432/capbench"),
                env.getOrDefault("DB_USER", "capbench"),
                Path.of(env.getOrDefault("DB_PASSWORD_FILE", "/run/secrets/db_password")),
                Integer.parseInt(required(env, "DB_POOL_SIZE")),
                Long.parseLong(required(env, "DB_POOL_TIMEOUT_MS")),
                Scope.valueOf(required(env, "DB_CONNECTION_SCOPE").toUpperCase(java.util.Locale.ROOT)),
                Integer.parseInt(required(env, "DB_CACHE_SIZE")),
                Long.parseLong(required(env, "DB_CACHE_TTL_S")));
    }

    private static String required(Map<String, String> env, String name) {
        String value = env.get(name);
        if (value == null || value.isBlank()) {
            throw new IllegalStateException(name + " is not set (tomcat-conf/tunables.env, passed by compose.yaml)");
        }
        return value;
    }
}
