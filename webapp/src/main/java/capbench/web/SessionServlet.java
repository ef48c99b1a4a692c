package capbench.web;

import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import jakarta.servlet.http.HttpSession;
import java.io.IOException;
import java.util.Optional;

/**
 * {@code GET /session?kb=K&user=ID}: state kept for a user between requests, in the HttpSession (seed 002: the
 * sessions of a few thousand users filled the heap, StandardManager holding most of it). The user's session
 * keeps K kB and counts the user's requests; the answer says whether this node found the session or had to
 * start a new one (header {@code X-Session: found|new}, which the balancer logs): a user whose session was
 * found elsewhere before and is new here has lost it.
 *
 * <p>Session ids are the user ids. Our load generators keep no cookies, so the balancer sends each /session
 * request the cookie a browser would have sent back (haproxy.cfg), and the context (META-INF/context.xml)
 * lets Tomcat start a session under the id the client names.
 */
public class SessionServlet extends HttpServlet {

    static final String PAYLOAD = "capbench.payload";
    static final String REQUESTS = "capbench.requests";

    private final String node = NodeIdentity.name();

    @Override
    protected void doGet(HttpServletRequest req, HttpServletResponse resp) throws IOException {
        Optional<SessionRequest> parsed = Parameters.parsedOrRefused(req, resp, SessionRequest.PARAMETERS,
                SessionRequest::parse);
        if (parsed.isEmpty()) {
            return;
        }
        SessionRequest asked = parsed.get();
        HttpSession existing = req.getSession(false);
        HttpSession session = existing != null ? existing : req.getSession(true);
        int bytes = asked.kb() * 1024;
        Object kept = session.getAttribute(PAYLOAD);
        if (!(kept instanceof byte[] payload) || payload.length != bytes) {
            session.setAttribute(PAYLOAD, new byte[bytes]);
        }
        // Set again on every request, not changed in place: a replicating manager sends what was set.
        Object before = session.getAttribute(REQUESTS);
        int requests = (before instanceof Integer count ? count : 0) + 1;
        session.setAttribute(REQUESTS, requests);
        String state = existing != null ? "found" : "new";
        resp.setHeader("X-Session", state);
        Responses.json(resp, new Json()
                .put("node", node)
                .put("session", state)
                .put("requests", requests)
                .put("kb", asked.kb())
                .put("user", asked.user()));
    }
}
