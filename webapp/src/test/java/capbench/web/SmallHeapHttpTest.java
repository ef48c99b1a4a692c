package capbench.web;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import capbench.grinder.GrindMemory;
import capbench.grinder.Variant;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The smallest node's heap, for real: the webapp in embedded Tomcat in a JVM run as node3 of the small
 * profile runs (-Xmx192m, Serial, exit on OutOfMemoryError; the surefire execution "small-heap" in pom.xml),
 * hit over HTTP by 64 level-16 v1-nosync requests at once, three times. Every answer must be 200 or 503 with
 * Retry-After, never a 500, the admitted calls must never reserve more than the budget, and the node must
 * answer afterwards. Had the JVM run out of heap it would have exited, and surefire would fail the run for
 * the fork that vanished.
 *
 * <p>That JVM also runs interpreted only (-Xint). On node3 a call is slow (0.3 of a core, and the kernel
 * stops every thread for most of each 100 ms while over quota), so concurrent calls are all mid-way, holding
 * their buffers, at once. Compiled, on two free cores, a level-16 call takes about 3 ms, less than the
 * scheduler's time slice, so calls mostly run one after another: without any admission, 32 at once (three
 * times) passed in 3 runs of 3. Interpreted, a call takes about 100 ms of CPU, far longer than a time
 * slice, so concurrent calls overlap as they do on node3; with the admission switched off (a share of
 * 10 000 %) this test killed its JVM with OutOfMemoryError 6 times in 6 at 48 and at 64 requests at once
 * (2 in 5 at 32, none in 3 at 24): it catches an admission that fails.
 */
class SmallHeapHttpTest {

    /** Set by the small-heap execution; elsewhere (e.g. {@code -Dtest=} in the default run) the test skips. */
    private static final String EXECUTION = "capbench.smallHeap";
    private static final int CONCURRENT = 64;
    private static final int ROUNDS = 3;

    private static DeployedWebapp webapp;
    private static String base;
    private static ExecutorService clientThreads;
    private static HttpClient client;

    @BeforeAll
    static void startTomcat() throws Exception {
        assumeTrue(Boolean.getBoolean(EXECUTION), "runs in the small-heap surefire execution only");
        long maxHeap = Runtime.getRuntime().maxMemory();
        assertTrue(maxHeap <= 192L << 20, "this JVM must have node3's heap (-Xmx192m), it has " + (maxHeap >> 20)
                + " MiB: see the small-heap execution in pom.xml");
        webapp = new DeployedWebapp();
        base = "http://127.0.0.1:" + webapp.port();
        clientThreads = Executors.newFixedThreadPool(CONCURRENT);
        client = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).executor(clientThreads).build();
    }

    @AfterAll
    static void stopTomcat() throws Exception {
        if (webapp != null) {
            webapp.stop();
            clientThreads.shutdownNow();
        }
    }

    private static HttpResponse<String> get(String path) throws Exception {
        return client.send(request(path), HttpResponse.BodyHandlers.ofString());
    }

    private static HttpRequest request(String path) {
        return HttpRequest.newBuilder(URI.create(base + path)).timeout(Duration.ofSeconds(60)).GET().build();
    }

    /** {@code count} requests sent together; their answers, in order. */
    private static List<HttpResponse<String>> together(String path, int count) {
        List<CompletableFuture<HttpResponse<String>>> pending = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            pending.add(client.sendAsync(request(path), HttpResponse.BodyHandlers.ofString()));
        }
        return pending.stream().map(CompletableFuture::join).toList();
    }

    @Test
    void manyConcurrentLevelSixteenCallsGet200Or503AndTheNodeLives() throws Exception {
        MemoryAdmission admission = ((GrindServlet) webapp.servlet("grind")).admission();
        long perCall = GrindMemory.liveBytes(Variant.V1_NOSYNC, 16);
        // Watch what the admitted calls hold, every 0.1 ms or so (a spinning watcher would take a core from them).
        AtomicLong mostReserved = new AtomicLong();
        AtomicBoolean watching = new AtomicBoolean(true);
        Thread watcher = new Thread(() -> {
            while (watching.get()) {
                mostReserved.accumulateAndGet(admission.reserved(), Math::max);
                LockSupport.parkNanos(100_000);
            }
        });
        watcher.setDaemon(true);
        watcher.start();

        Map<Integer, Integer> statuses = new TreeMap<>();
        try {
            for (int round = 0; round < ROUNDS; round++) {
                for (HttpResponse<String> answer : together("/grind?variant=v1-nosync&level=16", CONCURRENT)) {
                    statuses.merge(answer.statusCode(), 1, Integer::sum);
                    if (answer.statusCode() == 200) {
                        assertTrue(answer.body().contains("\"level\":16,\"calls\":1,\"length\":2260992,"), answer.body());
                    } else {
                        assertEquals(503, answer.statusCode(), "only 200 or 503, got: " + answer.body());
                        assertEquals("1", answer.headers().firstValue("Retry-After").orElse(""), answer.body());
                    }
                }
            }
        } finally {
            watching.set(false);
            watcher.join();
        }
        System.out.printf("capbench: %d x %d concurrent level-16 v1-nosync calls, -Xmx%d MiB (budget %d MiB):"
                        + " statuses %s; at most %d admitted at once (%d MiB reserved)%n",
                ROUNDS, CONCURRENT, Runtime.getRuntime().maxMemory() >> 20, admission.budget() >> 20, statuses,
                mostReserved.get() / perCall, mostReserved.get() >> 20);

        assertTrue(statuses.getOrDefault(200, 0) > 0, "some were served: " + statuses);
        assertTrue(mostReserved.get() <= admission.budget(), "reserved at most " + mostReserved.get());
        assertEquals(0, admission.reserved(), "every reservation given back");
        assertEquals("ok\n", get("/health").body());
        HttpResponse<String> after = get("/grind?variant=v1-nosync&level=16");
        assertEquals(200, after.statusCode(), after.body());
    }

    @Test
    void levelThirteenUnderABusyNodesConcurrencyIsNeverRefused() {
        // 48 v1-nosync calls at once fit node3's budget (55); the lock-bound v1 fits Tomcat's 200 threads.
        for (HttpResponse<String> answer : together("/grind?variant=v1-nosync&level=13", 48)) {
            assertEquals(200, answer.statusCode(), answer.body());
        }
        for (HttpResponse<String> answer : together("/grind?variant=v1&level=13", 150)) {
            assertEquals(200, answer.statusCode(), answer.body());
        }
    }
}
