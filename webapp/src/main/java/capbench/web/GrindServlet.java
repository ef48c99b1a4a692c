package capbench.web;

import capbench.grinder.GrindMemory;
import capbench.grinder.Grinder;
import capbench.grinder.Variant;
import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.util.EnumMap;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicLong;

/**
 * {@code GET /grind?variant=V&level=N[&user=ID]}: runs one Grinder call and reports what it cost.
 *
 * <p>One grinder per variant lives as long as the servlet, so {@code v1} and {@code v2} really are one
 * instance shared by every request thread, as in the study. The reported {@code grind_ms} is the wall time
 * of the call, lock waiting included (the study's "Grind Time"); {@code alloc_bytes} is what the request
 * thread allocated during the call, read from the JVM's per-thread counter.
 *
 * <p>Before grinding, a request reserves the heap its call can hold from the node's {@link MemoryAdmission};
 * when the budget stays full it is answered 503 with Retry-After instead of risking the node's heap.
 */
public class GrindServlet extends HttpServlet {

    /** Retry-After of a refusal, in seconds: room comes back within milliseconds, as calls end, and 1 is the
     *  shortest wait the header can ask for (0 would invite an immediate retry into the same full budget). */
    static final int RETRY_AFTER_SECONDS = 1;

    private final Map<Variant, Grinder> grinders = new EnumMap<>(Variant.class);
    private final com.sun.management.ThreadMXBean threads = allocationCounter();
    private final String node = NodeIdentity.name();
    private final MemoryAdmission admission = MemoryAdmission.forThisJvm();
    private final AtomicLong served = new AtomicLong();

    @Override
    public void init() {
        for (Variant variant : Variant.values()) {
            grinders.put(variant, variant.newGrinder());
        }
    }

    @Override
    protected void doGet(HttpServletRequest req, HttpServletResponse resp) throws IOException {
        Optional<GrindRequest> parsed = Parameters.parsedOrRefused(req, resp, GrindRequest.PARAMETERS,
                GrindRequest::parse);
        if (parsed.isEmpty()) {
            return;
        }
        GrindRequest request = parsed.get();
        long estimate = GrindMemory.liveBytes(request.variant(), request.level());
        Optional<MemoryAdmission.Reservation> admitted = reserve(estimate);
        if (admitted.isEmpty()) {
            Responses.unavailable(resp, RETRY_AFTER_SECONDS, "this node's memory for grinding is in use ("
                    + mib(admission.reserved()) + " of " + mib(admission.budget()) + " MiB reserved; this call needs "
                    + mib(estimate) + " MiB); retry after " + RETRY_AFTER_SECONDS + " s");
            return;
        }
        // Released only once the answer is written: the result string stays reachable until then.
        try (MemoryAdmission.Reservation held = admitted.get()) {
            grind(request, resp);
        }
    }

    private void grind(GrindRequest request, HttpServletResponse resp) throws IOException {
        Grinder grinder = grinders.get(request.variant());
        int calls = calls(served.incrementAndGet(), request.work());

        long allocatedBefore = allocatedBytes();
        long started = System.nanoTime();
        String result = grinder.grind(request.level());
        for (int call = 1; call < calls; call++) {
            result = grinder.grind(request.level());
        }
        long elapsedNanos = System.nanoTime() - started;
        long allocated = allocatedBefore < 0 ? -1 : allocatedBytes() - allocatedBefore;

        Responses.json(resp, new Json()
                .put("node", node)
                .put("variant", request.variant().wireName())
                .put("level", request.level())
                .put("calls", calls)
                .put("length", result.length())
                .put("grind_ms", Math.round(elapsedNanos / 1_000.0) / 1_000.0)
                .put("alloc_bytes", allocated < 0 ? null : allocated)
                .put("user", request.user()));
    }

    /**
     * The Grinder calls the {@code n}th request served makes at {@code work} percent: what the first n requests
     * are owed, less what the first n - 1 were, so that any run of requests makes work/100 calls each, within
     * one call (105: one request in twenty makes two). Counted over every request the servlet serves.
     */
    static int calls(long n, int work) {
        return (int) (n * work / 100 - (n - 1) * work / 100);
    }

    private Optional<MemoryAdmission.Reservation> reserve(long bytes) {
        try {
            return admission.reserve(bytes);
        } catch (InterruptedException e) {
            // Tomcat is stopping this thread: refuse, and leave the interrupt for it to see.
            Thread.currentThread().interrupt();
            return Optional.empty();
        }
    }

    /** The budget this servlet admits by (tests fill it to see the refusal). */
    MemoryAdmission admission() {
        return admission;
    }

    private static String mib(long bytes) {
        return String.format(Locale.ROOT, "%.1f", bytes / 1048576.0);
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
