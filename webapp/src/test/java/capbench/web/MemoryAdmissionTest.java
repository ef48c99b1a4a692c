package capbench.web;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import capbench.grinder.GrindMemory;
import capbench.grinder.Variant;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/** The admission's rules on their own, with small budgets: no server, each case well under a second. */
class MemoryAdmissionTest {

    private static final Duration NO_WAIT = Duration.ZERO;

    @Test
    void admitsWhatFitsAndRefusesTheRestAtOnceWithoutAWait() throws Exception {
        MemoryAdmission admission = new MemoryAdmission(100, NO_WAIT);
        Optional<MemoryAdmission.Reservation> first = admission.reserve(40);
        Optional<MemoryAdmission.Reservation> second = admission.reserve(60);
        assertTrue(first.isPresent() && second.isPresent());
        assertEquals(100, admission.reserved());
        assertFalse(admission.reserve(1).isPresent(), "the budget is full");
        first.get().close();
        assertEquals(60, admission.reserved());
        assertTrue(admission.reserve(40).isPresent(), "room given back is reused");
    }

    @Test
    void closingTwiceGivesTheShareBackOnce() throws Exception {
        MemoryAdmission admission = new MemoryAdmission(100, NO_WAIT);
        MemoryAdmission.Reservation held = admission.reserve(30).orElseThrow();
        admission.reserve(20).orElseThrow();
        held.close();
        held.close();
        assertEquals(20, admission.reserved());
    }

    @Test
    void aWaitingRequestIsAdmittedAsSoonAsRoomComesBack() throws Exception {
        MemoryAdmission admission = new MemoryAdmission(100, Duration.ofSeconds(10));
        MemoryAdmission.Reservation full = admission.reserve(100).orElseThrow();
        ExecutorService waiter = Executors.newSingleThreadExecutor();
        try {
            long started = System.nanoTime();
            Future<Optional<MemoryAdmission.Reservation>> waiting = waiter.submit(() -> admission.reserve(50));
            Thread.sleep(100);
            assertFalse(waiting.isDone(), "it waits while the budget is full");
            full.close();
            assertTrue(waiting.get(5, TimeUnit.SECONDS).isPresent());
            assertTrue(System.nanoTime() - started < TimeUnit.SECONDS.toNanos(5), "admitted on the release");
            assertEquals(50, admission.reserved());
        } finally {
            waiter.shutdownNow();
        }
    }

    @Test
    void aRequestThatFindsNoRoomIsRefusedAfterTheBoundedWait() throws Exception {
        MemoryAdmission admission = new MemoryAdmission(100, Duration.ofMillis(150));
        admission.reserve(100).orElseThrow();
        long started = System.nanoTime();
        assertFalse(admission.reserve(1).isPresent());
        long waitedMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started);
        assertTrue(waitedMillis >= 150 && waitedMillis < 2_000, "waited " + waitedMillis + " ms");
        assertEquals(100, admission.reserved(), "a refusal reserves nothing");
    }

    @Test
    void aRequestLargerThanTheBudgetRunsAloneRatherThanNever() throws Exception {
        MemoryAdmission admission = new MemoryAdmission(100, NO_WAIT);
        MemoryAdmission.Reservation large = admission.reserve(500).orElseThrow();
        assertFalse(admission.reserve(1).isPresent(), "nothing runs beside it");
        large.close();
        admission.reserve(1).orElseThrow();
        assertFalse(admission.reserve(500).isPresent(), "nor does it run beside anything");
    }

    @Test
    void anInterruptedWaitEndsTheWait() throws Exception {
        MemoryAdmission admission = new MemoryAdmission(100, Duration.ofSeconds(30));
        admission.reserve(100).orElseThrow();
        Thread.currentThread().interrupt();
        assertThrows(InterruptedException.class, () -> admission.reserve(1));
        assertFalse(Thread.interrupted());
    }

    @Test
    void badReservationsAndBudgetsAreRefused() {
        assertThrows(IllegalArgumentException.class, () -> new MemoryAdmission(100, NO_WAIT).reserve(0));
        assertThrows(IllegalArgumentException.class, () -> new MemoryAdmission(0, NO_WAIT));
        assertThrows(IllegalArgumentException.class, () -> new MemoryAdmission(100, Duration.ofMillis(-1)));
    }

    @Test
    void manyThreadsTogetherNeverHoldMoreThanTheBudget() throws Exception {
        MemoryAdmission admission = new MemoryAdmission(100, Duration.ofMillis(50));
        AtomicLong holding = new AtomicLong();
        AtomicLong mostHeld = new AtomicLong();
        int threads = 32;
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        CountDownLatch start = new CountDownLatch(1);
        List<Future<int[]>> workers = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
            long size = 10 + (t % 4) * 10; // 10 to 40: several fit at once, never all
            workers.add(pool.submit(() -> {
                start.await();
                int admitted = 0;
                int refused = 0;
                for (int call = 0; call < 50; call++) {
                    Optional<MemoryAdmission.Reservation> got = admission.reserve(size);
                    if (got.isEmpty()) {
                        refused++;
                        continue;
                    }
                    try (MemoryAdmission.Reservation held = got.get()) {
                        mostHeld.accumulateAndGet(holding.addAndGet(size), Math::max);
                        Thread.sleep(0, 200_000);
                        holding.addAndGet(-size);
                    }
                    admitted++;
                }
                return new int[] {admitted, refused};
            }));
        }
        start.countDown();
        int admitted = 0;
        for (Future<int[]> worker : workers) {
            int[] counts = worker.get(60, TimeUnit.SECONDS);
            assertEquals(50, counts[0] + counts[1]);
            admitted += counts[0];
        }
        pool.shutdown();
        assertTrue(mostHeld.get() <= 100, "held together at most " + mostHeld.get());
        assertTrue(admitted > 0);
        assertEquals(0, admission.reserved(), "everything given back");
    }

    @Test
    void theBudgetIsTheShareOfTheHeapTheJvmReports() {
        // node3 of the small profile: -Xmx192m, which Serial reports as 194,641,920 bytes (run.json of a run).
        assertEquals(77_856_768L, MemoryAdmission.budgetFor(194_641_920L));
        assertEquals(MemoryAdmission.budgetFor(Runtime.getRuntime().maxMemory()),
                MemoryAdmission.forThisJvm().budget());
        assertEquals(200, MemoryAdmission.forThisJvm().maxWaitMillis());
    }

    /**
     * The numbers behind the share, from the settings themselves: on every profile's every node, level 13 (the
     * benches' default) is never refused for memory. The lock-bound variants fit more calls than Tomcat has
     * threads (so never, whatever the load); v1-nosync fits at least 50 calls at once, several times what a
     * node holds in flight at its capacity (Little's law: about 400/s x a few ms).
     */
    @Test
    void levelThirteenIsNeverRefusedOnAnyProfilesNode() throws IOException {
        Path root = Path.of("..").toAbsolutePath().normalize();
        int maxThreads = Integer.parseInt(setting(root.resolve("tomcat-conf/tunables.env"), "TOMCAT_MAX_THREADS"));
        List<Long> heaps = new ArrayList<>();
        try (Stream<Path> profiles = Files.list(root.resolve("cluster/profiles"))) {
            for (Path profile : profiles.filter(p -> p.toString().endsWith(".env")).toList()) {
                Matcher heap = Pattern.compile("(?m)^NODE\\d+_HEAP=(\\d+)([mg])$").matcher(Files.readString(profile));
                while (heap.find()) {
                    heaps.add(Long.parseLong(heap.group(1)) << (heap.group(2).equals("g") ? 30 : 20));
                }
            }
        }
        assertTrue(heaps.size() >= 6, "node heaps found in the profiles: " + heaps);
        for (long heap : heaps) {
            // The JVM reports a little less than -Xmx: Serial leaves one survivor space out (1/30 of the heap).
            long budget = MemoryAdmission.budgetFor(heap - heap / 30);
            for (Variant variant : Variant.values()) {
                long atOnce = budget / GrindMemory.liveBytes(variant, 13);
                long needed = variant == Variant.V1_NOSYNC ? 50 : maxThreads;
                assertTrue(atOnce >= needed, variant.wireName() + " level 13 on a " + (heap >> 20)
                        + " MiB heap: " + atOnce + " calls at once, want " + needed);
            }
            assertTrue(budget / GrindMemory.liveBytes(Variant.V1_NOSYNC, 16) >= 5, "level 16 on " + (heap >> 20));
        }
    }

    private static String setting(Path file, String key) throws IOException {
        Matcher value = Pattern.compile("(?m)^" + key + "=(\\S+)$").matcher(Files.readString(file));
        assertTrue(value.find(), key + " in " + file);
        return value.group(1);
    }
}
