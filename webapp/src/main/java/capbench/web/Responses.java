package capbench.web;

import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;

/** The servlet's response shapes: one JSON line, or one plain-text line; never cached. */
final class Responses {

    private Responses() {
    }

    static void json(HttpServletResponse resp, Json body) throws IOException {
        write(resp, HttpServletResponse.SC_OK, "application/json", body.toString());
    }

    static void text(HttpServletResponse resp, int status, String body) throws IOException {
        write(resp, status, "text/plain", body);
    }

    /** 503 with a one-line reason, like the 400s, and Retry-After: when to try again, in whole seconds. */
    static void unavailable(HttpServletResponse resp, int retryAfterSeconds, String reason) throws IOException {
        resp.setHeader("Retry-After", Integer.toString(retryAfterSeconds));
        text(resp, HttpServletResponse.SC_SERVICE_UNAVAILABLE, reason);
    }

    private static void write(HttpServletResponse resp, int status, String type, String body) throws IOException {
        resp.setStatus(status);
        resp.setContentType(type);
        resp.setCharacterEncoding("UTF-8");
        resp.setHeader("Cache-Control", "no-store");
        resp.getWriter().write(body.endsWith("\n") ? body : body + "\n");
    }
}
