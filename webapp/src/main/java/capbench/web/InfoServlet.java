package capbench.web;

import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.lang.management.GarbageCollectorMXBean;
import java.lang.management.ManagementFactory;
import java.util.List;
import java.util.stream.Collectors;

/**
 * {@code GET /info}: what this node's JVM actually runs with, as the JVM sees it: the garbage collector its
 * ergonomics picked (under a CPU quota below 2 cores JDK 17 silently picks Serial), the processors it
 * counts, its maximum heap and the share of it grinding may hold, the versions, and how this request came
 * in. Reached only on the bench network.
 */
public class InfoServlet extends HttpServlet {

    @Override
    protected void doGet(HttpServletRequest req, HttpServletResponse resp) throws IOException {
        List<String> collectors = ManagementFactory.getGarbageCollectorMXBeans().stream()
                .map(GarbageCollectorMXBean::getName)
                .toList();
        Runtime runtime = Runtime.getRuntime();
        Responses.json(resp, new Json()
                .put("node", NodeIdentity.name())
                .put("gc", collectorFamily(collectors))
                .put("gc_collectors", String.join(", ", collectors))
                .put("available_processors", runtime.availableProcessors())
                .put("heap_max_bytes", runtime.maxMemory())
                // What grinding calls may hold at once before /grind answers 503 (MemoryAdmission).
                .put("grind_memory_budget_bytes", MemoryAdmission.budgetFor(runtime.maxMemory()))
                .put("java_version", System.getProperty("java.runtime.version"))
                .put("jvm", System.getProperty("java.vm.name"))
                .put("server", getServletContext().getServerInfo())
                .put("connector", System.getProperty("capbench.connector.summary"))
                // How this very request reached the node (HTTP/1.1 or HTTP/2.0, over TLS or not): the node's own
                // word on what the balancer speaks to it (NODE_HTTP), beside the balancer's.
                .put("request_protocol", req.getProtocol())
                .put("request_secure", req.isSecure()));
    }

    /** Names the collector family from the MXBean names each HotSpot collector registers. */
    static String collectorFamily(List<String> collectorNames) {
        String names = collectorNames.stream().collect(Collectors.joining(" "));
        if (names.contains("G1")) {
            return "G1";
        }
        if (names.contains("PS ")) {
            return "Parallel";
        }
        if (names.contains("ZGC")) {
            return "ZGC";
        }
        if (names.contains("Shenandoah")) {
            return "Shenandoah";
        }
        if (names.contains("Copy") || names.contains("MarkSweepCompact")) {
            return "Serial";
        }
        return names.isEmpty() ? "none" : names;
    }
}
