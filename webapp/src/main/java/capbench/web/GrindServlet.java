package capbench.web;

import capbench.grinder.Grinder;
import capbench.grinder.Variant;
import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.util.EnumMap;
import java.util.Map;

/**
 * {@code GET /grind?variant=V&level=N[&user=ID]}: runs one Grinder call and reports what it cost.
 *
 * <p>One grinder per variant lives as long as the servlet, so {@code v1} and {@code v2} really are one
 * instance shared by every request thread, as in the study. The reported {@code grind_ms} is the wall time
 * of the call, lock waiting included (the study's "Grind Time"); {@code alloc_bytes} is what the request
 * thread allocated during the call, read from the JVM's per-thread counter.
 */
public class GrindServlet extends HttpServlet {

    /** The request attribute Tomcat sets when it skipped parameters it could not parse (Globals in catalina). */
    static final String PARAMETER_PARSE_FAILED = "org.apache.catalina.parameter_parse_failed";

    private final Map<Variant, Grinder> grinders = new EnumMap<>(Variant.class);
    private final com.sun.management.ThreadMXBean threads = allocationCounter();
    private final String node = NodeIdentity.name();

    @Override
    public void init() {
        for (Variant variant : Variant.values()) {
            grinders.put(variant, variant.newGrinder());
        }
    }

    @Override
    protected void doGet(HttpServletRequest req, HttpServletResponse resp) throws IOException {
        GrindRequest request;
        try {
            // Read first: Tomcat parses the query on this first access and only then sets the flag below.
            Map<String, String[]> parameters = req.getParameterMap();
            // Tomcat skips a parameter it cannot decode (a bad %-escape, more than maxParameterCount) and only
            // flags the request: without this check "level=%zz" would grind the default level and answer 200,
            // as if the client had asked for nothing. (Bytes that are not UTF-8 decode to U+FFFD and are refused
            // by the value checks.)
            if (req.getAttribute(PARAMETER_PARSE_FAILED) != null) {
                throw new BadRequestException("the query string could not be decoded (a bad %-escape"
                        + " or too many parameters); allowed: variant, level, user");
            }
            request = GrindRequest.parse(parameters);
        } catch (BadRequestException e) {
            Responses.text(resp, HttpServletResponse.SC_BAD_REQUEST, e.getMessage());
            return;
        }
        Grinder grinder = grinders.get(request.variant());

        long allocatedBefore = allocatedBytes();
        long started = System.nanoTime();
        String result = grinder.grind(request.level());
        long elapsedNanos = System.nanoTime() - started;
        long allocated = allocatedBefore < 0 ? -1 : allocatedBytes() - allocatedBefore;

        Responses.json(resp, new Json()
                .put("node", node)
                .put("variant", request.variant().wireName())
                .put("level", request.level())
                .put("length", result.length())
                .put("grind_ms", Math.round(elapsedNanos / 1_000.0) / 1_000.0)
                .put("alloc_bytes", allocated < 0 ? null : allocated)
                .put("user", request.user()));
    }

    private long allocatedBytes() {
        return threads == null ? -1 : threads.getCurrentThreadAllocatedBytes();
    }

    /** The JVM's per-thread allocation counter, or null where this JVM does not offer it. */
    private static com.sun.management.ThreadMXBean allocationCounter() {
        if (ManagementFactory.getThreadMXBean() instanceof com.sun.management.ThreadMXBean bean
                && bean.isThreadAllocatedMemorySupported() && bean.isThreadAllocatedMemoryEnabled()) {
            return bean;
        }
        return null;
    }
}
