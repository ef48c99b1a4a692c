package capbench.web;

import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import com.sun.management.HotSpotDiagnosticMXBean;
import java.lang.management.ManagementFactory;
import java.net.InetAddress;
import java.util.Set;
import javax.management.JMException;
import javax.management.MBeanServer;
import javax.management.ObjectName;

/**
 * {@code GET /state}: the HTTP sessions every web application of this Tomcat holds, and their timeout, read from
 * Tomcat's Manager MBeans ({@code Catalina:type=Manager,host=*,context=*}) in the JVM's platform MBean server, so
 * a user's application deployed beside the Grinder is seen too. {@code POST /state?expire=all} ends every one of
 * those sessions (the Manager's {@code expireSession}), so that a capacity search starts from a heap without
 * the sessions the searches before it left behind. {@code gc=full} (alone or after {@code expire=all}) then runs a
 * full collection and adds the heap it left, {@code heap_live_mb}: the live heap, which the lowest heap sample of a
 * loaded step only approaches (it still holds the garbage the young collections promoted). A JVM told to ignore
 * {@code System.gc()} ({@code -XX:+DisableExplicitGC}, or {@code ExplicitGCInvokesConcurrent}, whose concurrent
 * cycle leaves the old garbage in place) answers {@code heap_live_why_not} instead.
 *
 * <p>Answered only to this host's loopback (the harness asks from inside the node); through the balancer it is a
 * 404, as if it did not exist: a load generator must never end the sessions it is measuring.
 */
public class StateServlet extends HttpServlet {

    // Any engine's domain: the nodes' server.xml names it Catalina, an embedded Tomcat (the tests') Tomcat.
    private static final String MANAGERS = "*:type=Manager,*";

    @Override
    protected void doGet(HttpServletRequest req, HttpServletResponse resp) throws IOException {
        if (refused(req, resp)) {
            return;
        }
        answer(resp, false, false);
    }

    @Override
    protected void doPost(HttpServletRequest req, HttpServletResponse resp) throws IOException {
        if (refused(req, resp)) {
            return;
        }
        String expireAsked = req.getParameter("expire");
        String gcAsked = req.getParameter("gc");
        boolean expire = "all".equals(expireAsked);
        boolean collect = "full".equals(gcAsked);
        if ((expireAsked != null && !expire) || (gcAsked != null && !collect) || !(expire || collect)) {
            Responses.text(resp, HttpServletResponse.SC_BAD_REQUEST,
                    "POST /state takes expire=all, gc=full, or both");
            return;
        }
        answer(resp, expire, collect);
    }

    /**
     * One JSON line: totals, then each context as {@code <path>.active}, {@code .timeout_s}, {@code .expired}; with
     * {@code collect}, the live heap after a full collection (after the sessions were ended, so theirs is not in it).
     */
    private static void answer(HttpServletResponse resp, boolean expire, boolean collect) throws IOException {
        MBeanServer server = ManagementFactory.getPlatformMBeanServer();
        Json body = new Json();
        int contexts = 0;
        long active = 0;
        long expired = 0;
        try {
            Set<ObjectName> managers = server.queryNames(new ObjectName(MANAGERS), null);
            for (ObjectName manager : managers) {
                String context = manager.getKeyProperty("context");
                long expiredHere = expire ? expireAll(server, manager) : 0;
                long activeHere = ((Number) server.getAttribute(manager, "activeSessions")).longValue();
                int timeoutS = timeoutSeconds(server, manager);
                body.put(context + ".active", activeHere).put(context + ".timeout_s", timeoutS);
                if (expire) {
                    body.put(context + ".expired", expiredHere);
                }
                contexts++;
                active += activeHere;
                expired += expiredHere;
            }
        } catch (JMException e) {
            Responses.text(resp, HttpServletResponse.SC_INTERNAL_SERVER_ERROR,
                    "Tomcat's Manager MBeans could not be read: " + e);
            return;
        }
        Json totals = new Json().put("contexts", contexts).put("active", active);
        if (expire) {
            totals.put("expired", expired);
        }
        if (collect) {
            liveHeap(totals);
        }
        Responses.json(resp, totals.merge(body));
    }

    private static void liveHeap(Json totals) {
        HotSpotDiagnosticMXBean hotspot = ManagementFactory.getPlatformMXBean(HotSpotDiagnosticMXBean.class);
        for (String ignored : new String[] {"DisableExplicitGC", "ExplicitGCInvokesConcurrent"}) {
            if (hotspot != null && "true".equals(hotspot.getVMOption(ignored).getValue())) {
                totals.put("heap_live_why_not", "-XX:+" + ignored + ": System.gc() runs no full collection");
                return;
            }
        }
        System.gc();
        long used = ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed();
        totals.put("heap_live_mb", Math.round(used / 1048576.0 * 10) / 10.0);
    }

    /**
     * The application's session timeout in seconds: its context's {@code sessionTimeout} (minutes, web.xml's
     * session-config), from the WebModule MBean of the Manager's host and context; 0 or less: sessions never time out.
     */
    private static int timeoutSeconds(MBeanServer server, ObjectName manager) throws JMException {
        String path = manager.getKeyProperty("context");
        String module = "//" + manager.getKeyProperty("host") + ("/".equals(path) ? "/" : path);
        // A host name and a deployed context path hold none of the characters an ObjectName value must quote.
        Set<ObjectName> modules = server.queryNames(
                new ObjectName(manager.getDomain() + ":j2eeType=WebModule,name=" + module + ",*"), null);
        for (ObjectName webModule : modules) {
            return ((Number) server.getAttribute(webModule, "sessionTimeout")).intValue() * 60;
        }
        return -1;
    }

    private static long expireAll(MBeanServer server, ObjectName manager) throws JMException {
        String ids = (String) server.invoke(manager, "listSessionIds", null, null);
        long count = 0;
        for (String id : ids.trim().split("\\s+")) {
            if (!id.isEmpty()) {
                server.invoke(manager, "expireSession", new Object[] {id}, new String[] {String.class.getName()});
                count++;
            }
        }
        return count;
    }

    /** Anything but this host's loopback gets the 404 an unmapped path gets. */
    private static boolean refused(HttpServletRequest req, HttpServletResponse resp) throws IOException {
        if (fromLoopback(req.getRemoteAddr())) {
            return false;
        }
        resp.sendError(HttpServletResponse.SC_NOT_FOUND);
        return true;
    }

    static boolean fromLoopback(String address) {
        try {
            return address != null && InetAddress.getByName(address).isLoopbackAddress();
        } catch (IOException e) {
            return false;
        }
    }
}
