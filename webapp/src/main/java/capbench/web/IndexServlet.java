package capbench.web;

import capbench.grinder.Variant;
import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;

/** {@code GET /}: lists the endpoints, so a person who lands here learns the API. */
public class IndexServlet extends HttpServlet {

    @Override
    protected void doGet(HttpServletRequest req, HttpServletResponse resp) throws IOException {
        StringBuilder page = new StringBuilder();
        page.append("capbench grinder on ").append(NodeIdentity.name()).append('\n');
        page.append("GET /grind?variant=V&level=N[&user=ID]  one Grinder call; JSON with node, variant, level,")
                .append(" length, grind_ms, alloc_bytes\n");
        page.append("    variant: ").append(Variant.allWireNames())
                .append(" (default ").append(Variant.DEFAULT.wireName()).append(")\n");
        for (Variant variant : Variant.values()) {
            page.append("      ").append(variant.wireName()).append(": ").append(variant.description()).append('\n');
        }
        page.append("    level: ").append(GrindRequest.MIN_LEVEL).append(" to ").append(GrindRequest.MAX_LEVEL)
                .append(" (default ").append(GrindRequest.DEFAULT_LEVEL).append("); each level doubles the cost\n");
        page.append("    503 with Retry-After when the calls in progress hold this node's memory for grinding\n");
        page.append("GET /query?rows=R&join=0|1&write=P&calls=C[&user=ID]  work on the shared database through")
                .append(" this node's connection pool; 503 naming the pool when it gives no connection in time\n");
        page.append("GET /session?kb=K&user=ID  the user's session keeps K kB (0 to ").append(SessionRequest.MAX_KB)
                .append("); X-Session: found or new\n");
        page.append("GET /health  readiness: 200 ok\n");
        page.append("GET /info    this node's JVM: garbage collector in use, processors, max heap, versions\n");
        page.append("GET /datasource  whether Tomcat offers the shared database as JNDI ").append(DataSourceServlet.NAME)
                .append(" (with a user's application) and what it answers\n");
        Responses.text(resp, HttpServletResponse.SC_OK, page.toString());
    }
}
