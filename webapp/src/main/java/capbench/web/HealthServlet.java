package capbench.web;

import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;

/**
 * {@code GET /health}: readiness for HAProxy's and Compose's checks. It answers only once the webapp is
 * deployed (the servlet exists), and costs nothing, so frequent checks do not disturb a measurement.
 */
public class HealthServlet extends HttpServlet {

    @Override
    protected void doGet(HttpServletRequest req, HttpServletResponse resp) throws IOException {
        Responses.text(resp, HttpServletResponse.SC_OK, "ok");
    }
}
