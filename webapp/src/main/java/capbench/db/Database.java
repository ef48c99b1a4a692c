package capbench.db;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;

/**
 * The node's connection pool to the shared database (HikariCP) and the work of one query request.
 *
 * <p>The pool is made at deployment ({@link #open}) without waiting for the database: a node serves /grind
 * without one, and a database that starts after the nodes is simply found. Made then, its statistics
 * ({@code com.zaxxer.hikari} MBeans: active and idle connections, threads waiting for one) exist when PCP's
 * loggers start, which log only the metrics that exist at their start.
 */
public final class Database implements AutoCloseable {

    private static final String READ = "SELECT o.id, o.amount FROM orders o WHERE o.id >= ? ORDER BY o.id LIMIT ?";
    private static final String READ_JOINED = "SELECT o.id, o.amount, a.name, a.balance FROM orders o"
            + " JOIN accounts a ON a.id = o.account_id WHERE o.id >= ? ORDER BY o.id LIMIT ?";
    private static final String WRITE = "UPDATE accounts SET balance = balance + 1 WHERE id = ?";
    private static final String SIZES = "SELECT (SELECT max(id) FROM orders), (SELECT max(id) FROM accounts)";

    private final DatabaseSettings settings;
    private final String node;
    private volatile HikariDataSource pool;  // made once; read by every request without a lock
    private volatile int[] sizes;  // the largest order and account ids, read once
    private final QueryCache cache;

    public Database(DatabaseSettings settings, String node) {
        this.settings = settings;
        this.node = node;
        this.cache = QueryCache.of(settings.cacheSize(), settings.cacheTtlSeconds());
    }

    /** Makes the pool now; when it cannot (no password file: a host without the database), the first query
     *  tries again and answers why. */
    public void open() {
        try {
            pool();
        } catch (IOException e) {
            java.util.logging.Logger.getLogger(Database.class.getName()).warning(
                    "no connection pool yet: " + e.getMessage());
        }
    }

    public DatabaseSettings settings() {
        return settings;
    }

    /** What one request asks: `calls` statements, each reading `rows` orders (joined to their accounts or
     *  not) from a start that follows the user (or is random), and with a chance of `writePct` % an update of
     *  the user's account (the same row for the same user: writes of one user contend). */
    public record Work(int rows, boolean join, int writePct, int calls, String user) {
    }

    /** What the request cost: rows read, the statements the node's cache answered instead of the database,
     *  updates made, and the time spent waiting for a pooled connection. */
    public record Done(int rows, int cachedReads, int writes, long poolWaitNanos) {
    }

    /** Runs the work with the configured scope. Throws {@link java.sql.SQLTransientConnectionException} when
     *  the pool gives no connection within its timeout. A request whose reads the cache answers and that writes
     *  nothing borrows no connection. */
    public Done run(Work work) throws SQLException, IOException {
        HikariDataSource source = pool();
        ThreadLocalRandom random = ThreadLocalRandom.current();
        Tally tally = new Tally();
        if (settings.scope() == DatabaseSettings.Scope.REQUEST) {
            try (Borrowed connection = new Borrowed(source, tally)) {
                for (int call = 0; call < work.calls(); call++) {
                    oneCall(connection, work, call, random, tally);
                }
            }
        } else {
            for (int call = 0; call < work.calls(); call++) {
                try (Borrowed connection = new Borrowed(source, tally)) {
                    oneCall(connection, work, call, random, tally);
                }
            }
        }
        return new Done(tally.rows, tally.cached, tally.writes, tally.waited);
    }

    /** The node's cache of reads (off when DB_CACHE_SIZE is 0). */
    public QueryCache cache() {
        return cache;
    }

    private static final class Tally {
        int rows;
        int cached;
        int writes;
        long waited;
    }

    /** A pooled connection borrowed when first needed (the time waited for it counted), returned at close. */
    private static final class Borrowed implements AutoCloseable {
        private final HikariDataSource source;
        private final Tally tally;
        private Connection connection;

        Borrowed(HikariDataSource source, Tally tally) {
            this.source = source;
            this.tally = tally;
        }

        Connection get() throws SQLException {
            if (connection == null) {
                long asked = System.nanoTime();
                connection = source.getConnection();
                tally.waited += System.nanoTime() - asked;
            }
            return connection;
        }

        @Override
        public void close() throws SQLException {
            if (connection != null) {
                connection.close();
            }
        }
    }

    private void oneCall(Borrowed connection, Work work, int call, ThreadLocalRandom random, Tally tally)
            throws SQLException {
        int[] size = sizes != null ? sizes : sizes(connection.get());
        int orders = size[0];
        int accounts = size[1];
        int key = work.user() == null ? random.nextInt(Integer.MAX_VALUE) : Math.floorMod(work.user().hashCode(), Integer.MAX_VALUE);
        int start = 1 + Math.floorMod(key + call * work.rows(), Math.max(1, orders - work.rows() + 1));
        QueryCache.Key read = new QueryCache.Key(work.join(), start, work.rows());
        List<Object[]> cached = cache.get(read);
        if (cached != null) {
            tally.rows += cached.size();
            tally.cached++;
        } else {
            tally.rows += read(connection.get(), read);
        }
        if (work.writePct() > 0 && random.nextInt(100) < work.writePct()) {
            try (PreparedStatement statement = connection.get().prepareStatement(WRITE)) {
                statement.setInt(1, 1 + Math.floorMod(key, accounts));
                tally.writes += statement.executeUpdate();
            }
        }
    }

    /** Reads the rows; with a cache, keeps them (their values, as a cache of these results would). */
    private int read(Connection connection, QueryCache.Key key) throws SQLException {
        try (PreparedStatement statement = connection.prepareStatement(key.join() ? READ_JOINED : READ)) {
            statement.setInt(1, key.start());
            statement.setInt(2, key.rows());
            try (ResultSet result = statement.executeQuery()) {
                if (!cache.on()) {
                    int read = 0;
                    while (result.next()) {
                        read++;
                    }
                    return read;
                }
                int columns = result.getMetaData().getColumnCount();
                List<Object[]> rows = new ArrayList<>();
                while (result.next()) {
                    Object[] row = new Object[columns];
                    for (int column = 0; column < columns; column++) {
                        row[column] = result.getObject(column + 1);
                    }
                    rows.add(row);
                }
                cache.put(key, rows);
                return rows.size();
            }
        }
    }

    private int[] sizes(Connection connection) throws SQLException {
        int[] known = sizes;
        if (known == null) {
            try (PreparedStatement statement = connection.prepareStatement(SIZES);
                 ResultSet result = statement.executeQuery()) {
                result.next();
                known = new int[] {result.getInt(1), result.getInt(2)};
            }
            sizes = known;
        }
        return known;
    }

    private HikariDataSource pool() throws IOException {
        HikariDataSource made = pool;
        return made != null ? made : makePool();
    }

    private synchronized HikariDataSource makePool() throws IOException {
        if (pool == null) {
            String password = Files.readString(settings.passwordFile(), StandardCharsets.UTF_8).strip();
            pool = new HikariDataSource(poolConfig(settings, node, password));
        }
        return pool;
    }

    /** The pool's configuration: the node's settings, started without waiting for the database. */
    static HikariConfig poolConfig(DatabaseSettings settings, String node, String password) {
        HikariConfig config = new HikariConfig();
        config.setPoolName("capbench");
        // By class name: DriverManager, loaded outside the webapp, does not see drivers in WEB-INF/lib.
        config.setDriverClassName("org.postgresql.Driver");
        config.setJdbcUrl(settings.jdbcUrl());
        config.setUsername(settings.user());
        config.setPassword(password);
        config.setMaximumPoolSize(settings.poolSize());
        config.setConnectionTimeout(settings.poolTimeoutMs());
        // Start without the database (it may come later); each borrow waits for it as for a busy pool.
        config.setInitializationFailTimeout(-1);
        // PostgreSQL's default, named: left to detection, HikariCP asks the pool's first connection, and when
        // that connection breaks while asked (a database re-created just after the node started) it sets level
        // -1 on every later connection, which the driver refuses: the pool never holds a connection again
        // (HikariCP issue #1944; a node's pool stayed empty for 17 minutes in CI).
        config.setTransactionIsolation("TRANSACTION_READ_COMMITTED");
        config.setRegisterMbeans(true);
        config.addDataSourceProperty("ApplicationName", "capbench-" + node);
        return config;
    }

    @Override
    public synchronized void close() {
        if (pool != null) {
            pool.close();
        }
    }
}
