package capbench.web;

import capbench.db.Database;
import capbench.db.DatabaseSettings;
import capbench.db.QueryCacheStats;
import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.sql.SQLException;
import java.sql.SQLTransientConnectionException;
import java.util.Optional;

/**
 * {@code GET /query?rows=R&join=0|1&write=P&calls=C[&user=ID]}: work on the shared database through this node's
 * connection pool (seeds 003 and 004: the pool, not the database, set the limit). Answers what it did and how
 * long it waited for a connection; a pool that gives none within DB_POOL_TIMEOUT_MS is a 503 naming the pool,
 * as is a database that cannot be reached. With the node's cache on (DB_CACHE_SIZE), a read it holds is answered
 * from the heap ("cached_reads").
 */
public class QueryServlet extends HttpServlet {

    private final String node = NodeIdentity.name();
    private Database database;  // null when the node was given no pool settings
    private String unconfigured;

    @Override
    public void init() {
        try {
            database = new Database(DatabaseSettings.from(System.getenv()), node);
            database.open();
            QueryCacheStats.register(database.cache());
        } catch (IllegalStateException e) {
            unconfigured = e.getMessage();
            log("no database pool: " + unconfigured);
        }
    }

    @Override
    public void destroy() {
        if (database != null) {
            QueryCacheStats.unregister();
            database.close();
        }
    }

    @Override
    protected void doGet(HttpServletRequest req, HttpServletResponse resp) throws IOException {
        Optional<Database.Work> parsed = Parameters.parsedOrRefused(req, resp, QueryRequest.PARAMETERS,
                QueryRequest::parse);
        if (parsed.isEmpty()) {
            return;
        }
        Database.Work work = parsed.get();
        if (database == null) {
            Responses.unavailable(resp, 1, "this node has no database pool: " + unconfigured);
            return;
        }
        DatabaseSettings settings = database.settings();
        long started = System.nanoTime();
        Database.Done done;
        try {
            done = database.run(work);
        } catch (SQLTransientConnectionException e) {
            // HikariCP gives the last failure to connect as the cause; none means every connection was busy.
            String why = e.getCause() == null
                    ? "all " + settings.poolSize() + " of this node's pooled connections were in use (DB_POOL_SIZE="
                    + settings.poolSize() + ")"
                    : "the database could not be reached (" + e.getCause().getClass().getSimpleName() + ")";
            Responses.unavailable(resp, 1, "no database connection within " + settings.poolTimeoutMs()
                    + " ms (DB_POOL_TIMEOUT_MS): " + why);
            return;
        } catch (SQLException e) {
            Responses.unavailable(resp, 1, "the database refused the work: SQL state " + e.getSQLState());
            return;
        } catch (IOException e) {
            Responses.unavailable(resp, 1, "no connection pool: the database password could not be read ("
                    + e.getClass().getSimpleName() + ")");
            return;
        }
        long elapsed = System.nanoTime() - started;
        Responses.json(resp, new Json()
                .put("node", node)
                .put("rows", done.rows())
                .put("cached_reads", done.cachedReads())
                .put("writes", done.writes())
                .put("calls", work.calls())
                .put("scope", settings.scope().wireName())
                .put("pool_wait_ms", millis(done.poolWaitNanos()))
                .put("query_ms", millis(elapsed))
                .put("user", work.user()));
    }

    private static double millis(long nanos) {
        return Math.round(nanos / 1_000.0) / 1_000.0;
    }
}
