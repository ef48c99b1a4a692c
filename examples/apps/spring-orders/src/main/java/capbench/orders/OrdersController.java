package capbench.orders;

import java.util.List;
import java.util.Map;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;

/**
 * {@code GET /accounts/{id}/orders?limit=N}: the account's latest orders and their total, one indexed query on
 * the seeded {@code orders} table (db/schema.sql); {@code GET /ping}: an answer that asks nothing of the database,
 * for the balancer's health checks.
 *
 * <p>{@code orders.lookup} is fixed when the JAR is built ({@code examples/apps/spring-orders.sh --n-plus-one}):
 * {@code query} reads the orders in one query; {@code per-order} reads their ids, then each order by its own
 * query (the classic N+1 regression), a second build of the same service for a duet to catch.
 */
@RestController
public class OrdersController {

    private static final int MAX_LIMIT = 100;

    private final JdbcTemplate jdbc;
    private final boolean perOrder;

    public OrdersController(JdbcTemplate jdbc, @Value("${orders.lookup}") String lookup) {
        this.jdbc = jdbc;
        this.perOrder = "per-order".equals(lookup);
    }

    @GetMapping("/ping")
    public Map<String, String> ping() {
        return Map.of("status", "ok");
    }

    @GetMapping("/accounts/{id}/orders")
    public Map<String, Object> orders(@PathVariable int id, @RequestParam(defaultValue = "10") int limit) {
        int rows = Math.max(1, Math.min(limit, MAX_LIMIT));
        List<Map<String, Object>> orders = perOrder ? ordersOneByOne(id, rows) : jdbc.queryForList(
                "SELECT id, amount, note FROM orders WHERE account_id = ? ORDER BY id DESC LIMIT ?", id, rows);
        long total = orders.stream().mapToLong(order -> ((Number) order.get("amount")).longValue()).sum();
        return Map.of("account", id, "orders", orders, "total", total);
    }

    private List<Map<String, Object>> ordersOneByOne(int account, int rows) {
        List<Long> ids = jdbc.queryForList(
                "SELECT id FROM orders WHERE account_id = ? ORDER BY id DESC LIMIT ?", Long.class, account, rows);
        return ids.stream()
                .map(order -> jdbc.queryForMap("SELECT id, amount, note FROM orders WHERE id = ?", order))
                .toList();
    }
}
