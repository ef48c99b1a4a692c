package capbench.web;

import java.util.List;

/**
 * The validated parameters of {@code GET /session}: how many kB the user's session keeps, and whose session it
 * is. Bounded so one request cannot ask for a large share of a node's heap: at most 1 MiB per session.
 */
record SessionRequest(int kb, String user) {

    static final List<String> PARAMETERS = List.of("kb", "user");
    static final int MAX_KB = 1024;

    static SessionRequest parse(Parameters parameters) throws BadRequestException {
        int kb = parameters.integer("kb", 0, MAX_KB, 4);
        String user = parameters.user();
        if (user == null) {
            throw new BadRequestException("user is required: the id of the user whose session this is");
        }
        return new SessionRequest(kb, user);
    }
}
