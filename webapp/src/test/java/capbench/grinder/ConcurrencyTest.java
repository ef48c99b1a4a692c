package capbench.grinder;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/** Many threads share one grinder per variant, as request threads do; every result must still be right. */
class ConcurrencyTest {

    private static final int THREADS = 32;
    private static final int CALLS_PER_THREAD = 40;

    @ParameterizedTest
    @EnumSource(Variant.class)
    void sharedGrinderStaysCorrectUnderConcurrentCalls(Variant variant) throws Exception {
        Grinder shared = variant.newGrinder();
        ExecutorService pool = Executors.newFixedThreadPool(THREADS);
        CountDownLatch start = new CountDownLatch(1);
        List<Future<Integer>> workers = new ArrayList<>();
        for (int t = 0; t < THREADS; t++) {
            int thread = t;
            workers.add(pool.submit(() -> {
                start.await();
                int checked = 0;
                for (int call = 0; call < CALLS_PER_THREAD; call++) {
                    // Mixed levels, so a buffer shared by mistake would show up as a wrong length or content.
                    int level = 6 + (thread + call) % 6;
                    assertEquals(GrinderTest.expected(level), shared.grind(level),
                            variant + " thread " + thread + " call " + call);
                    checked++;
                }
                return checked;
            }));
        }
        start.countDown();
        int total = 0;
        for (Future<Integer> worker : workers) {
            total += worker.get(120, TimeUnit.SECONDS);
        }
        pool.shutdown();
        assertEquals(THREADS * CALLS_PER_THREAD, total);
    }
}
