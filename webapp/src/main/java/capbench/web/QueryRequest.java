package capbench.web;

import capbench.db.Database;
import java.util.List;

/**
 * The validated parameters of {@code GET /query}: what one request asks of the shared database. Bounded so one
 * request cannot hold a connection for long: at most 20 statements of at most 1000 rows.
 */
final class QueryRequest {

    static final List<String> PARAMETERS = List.of("rows", "join", "write", "calls", "user");
    static final int MAX_ROWS = 1000;
    static final int MAX_CALLS = 20;

    private QueryRequest() {
    }

    static Database.Work parse(Parameters parameters) throws BadRequestException {
        int rows = parameters.integer("rows", 1, MAX_ROWS, 10);
        int join = parameters.integer("join", 0, 1, 0);
        int write = parameters.integer("write", 0, 100, 0);
        int calls = parameters.integer("calls", 1, MAX_CALLS, 1);
        return new Database.Work(rows, join == 1, write, calls, parameters.user());
    }
}
