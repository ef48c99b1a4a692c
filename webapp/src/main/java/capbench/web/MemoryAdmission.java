package capbench.web;

import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;

/**
 * Admission by memory: a request reserves the heap its call can hold (see capbench.grinder.GrindMemory)
 * from a fixed budget before it grinds, and gives it back when it is done. Valid requests could otherwise
 * hold more than the heap between them (about 20 level-16 {@code v1-nosync} calls on a 192 MB node) and the
 * node, which exits on OutOfMemoryError, would die of valid input.
 *
 * <p>A request that does not fit waits for others to release, at most {@link #MAX_WAIT}, then is refused
 * (the servlet answers 503 with Retry-After). The wait lets a burst through in turn instead of bouncing it:
 * calls end within milliseconds, so a waiter is usually admitted long before the bound. The bound keeps a
 * refused request quick and under the bench's latency goal (p99 500 ms), and stops threads from piling up
 * behind a budget that stays full under overload. Waiters are not queued in order: each release wakes them
 * all and whoever fits goes, so a large request can lose to small ones and be refused; it only ever waits
 * the bound.
 *
 * <p>A request larger than the whole budget is admitted when nothing else is reserved: the bound is on what
 * runs together, and no request is refused for good. (With the share below, every level fits the budget of
 * the smallest heap the settings allow, 32 MB; this only matters for tests that give tiny budgets.)
 */
final class MemoryAdmission {

    /**
     * The share of the JVM's max heap that grinding calls may hold at once. The rest holds what the budget
     * does not count, and it needs room: Tomcat and the metrics agent; the memory the lock-bound variants
     * keep by construction, up to about 60 MiB once all have run at level 16 ({@code v1}'s one working set
     * 5 N, {@code v2}'s buffers 2 N, {@code v3}'s ten instances' 20 N, N = 2.26 MB); and free space for the
     * collector. On the smallest node (node3 of the small profile, 192m: the JVM reports 185.6 MiB) 40 %
     * gives 74 MiB, which leaves 111 MiB for those. At level 13 it admits at once 55 {@code v1-nosync} calls
     * there (91 on node1) and 275 of the others, more than Tomcat's 200 threads: normal loads are never
     * refused. At level 16 it admits 6 {@code v1-nosync} calls at once on node3.
     */
    static final double HEAP_SHARE = 0.40;

    /** How long a request waits for room before it is refused: many level-16 calls' time, under 500 ms. */
    static final Duration MAX_WAIT = Duration.ofMillis(200);

    private final long budget;
    private final long maxWaitNanos;
    private final ReentrantLock lock = new ReentrantLock();
    private final Condition released = lock.newCondition();
    private long reserved; // guarded by lock

    MemoryAdmission(long budgetBytes, Duration maxWait) {
        if (budgetBytes < 1 || maxWait.isNegative()) {
            throw new IllegalArgumentException("budget must be positive and the wait not negative, got "
                    + budgetBytes + " bytes and " + maxWait);
        }
        this.budget = budgetBytes;
        this.maxWaitNanos = maxWait.toNanos();
    }

    /** The admission of this JVM: {@link #HEAP_SHARE} of its max heap, waits up to {@link #MAX_WAIT}. */
    static MemoryAdmission forThisJvm() {
        return new MemoryAdmission(budgetFor(Runtime.getRuntime().maxMemory()), MAX_WAIT);
    }

    /** The budget for a JVM whose max heap ({@link Runtime#maxMemory()}) is {@code maxHeapBytes}. */
    static long budgetFor(long maxHeapBytes) {
        return Math.max(1, (long) (maxHeapBytes * HEAP_SHARE));
    }

    /**
     * Reserves {@code bytes}, waiting up to the bound for room; empty when there was none. The caller must
     * close what it gets, in a finally block or try-with-resources.
     */
    Optional<Reservation> reserve(long bytes) throws InterruptedException {
        if (bytes < 1) {
            throw new IllegalArgumentException("a reservation must be positive, got " + bytes);
        }
        lock.lockInterruptibly();
        try {
            long remaining = maxWaitNanos;
            while (!fits(bytes)) {
                if (remaining <= 0) {
                    return Optional.empty();
                }
                remaining = released.awaitNanos(remaining);
            }
            reserved += bytes;
            return Optional.of(new Reservation(bytes));
        } finally {
            lock.unlock();
        }
    }

    private boolean fits(long bytes) {
        return reserved == 0 || bytes <= budget - reserved;
    }

    long budget() {
        return budget;
    }

    /** What admitted requests hold now. */
    long reserved() {
        lock.lock();
        try {
            return reserved;
        } finally {
            lock.unlock();
        }
    }

    long maxWaitMillis() {
        return TimeUnit.NANOSECONDS.toMillis(maxWaitNanos);
    }

    private void release(long bytes) {
        lock.lock();
        try {
            reserved -= bytes;
            released.signalAll();
        } finally {
            lock.unlock();
        }
    }

    /** One admitted request's share; closing it gives the share back, once however often it is closed. */
    final class Reservation implements AutoCloseable {

        private final long bytes;
        private final AtomicBoolean open = new AtomicBoolean(true);

        private Reservation(long bytes) {
            this.bytes = bytes;
        }

        long bytes() {
            return bytes;
        }

        @Override
        public void close() {
            if (open.compareAndSet(true, false)) {
                release(bytes);
            }
        }
    }
}
