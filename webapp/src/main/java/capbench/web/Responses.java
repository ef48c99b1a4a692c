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

    private static void write(HttpServletResponse resp, int status, String type, String body) throws IOException {
        resp.setStatus(status);
        resp.setContentType(type);
        resp.setCharacterEncoding("UTF-8");
        resp.setHeader("Cache-Control", "no-store");
        resp.getWriter().write(body.endsWith("\n") ? body : body + "\n");
    }
}
