package capbench.grinder;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * Which variants serialise on which lock: a test thread holds a grinder's monitor and watches whether a
 * call from another thread blocks on it. This is the study's lock structure, checked rather than assumed.
 */
class LockingTest {

    @Test
    void v1WaitsForItsSharedInstanceLock() throws Exception {
        assertCallBlocksWhileHolding(Variant.V1.newGrinder());
    }

    @Test
    void v2WaitsForItsSharedInstanceLock() throws Exception {
        assertCallBlocksWhileHolding(Variant.V2.newGrinder());
    }

    @Test
    void v1NosyncTakesNoLock() throws Exception {
        Grinder grinder = Variant.V1_NOSYNC.newGrinder();
        Thread caller = new Thread(() -> grinder.grind(8));
        synchronized (grinder) {
            caller.start();
            caller.join(TimeUnit.SECONDS.toMillis(10));
            assertEquals(Thread.State.TERMINATED, caller.getState(), "v1-nosync finished while its monitor was held");
        }
    }

    @Test
    void v3BlocksOnlyTheCallHandedTheLockedMember() throws Exception {
        PooledGrinder pool = new PooledGrinder();
        ReusingGrinder locked = pool.member(0);
        synchronized (locked) {
            // The first call is handed member 0 and must wait; the next size-1 calls go to the others.
            Thread first = new Thread(() -> pool.grind(8));
            first.start();
            awaitState(first, Thread.State.BLOCKED);
            for (int i = 1; i < pool.size(); i++) {
                Thread other = new Thread(() -> pool.grind(8));
                other.start();
                other.join(TimeUnit.SECONDS.toMillis(10));
                assertEquals(Thread.State.TERMINATED, other.getState(), "call " + i + " went to a free member");
            }
            assertEquals(Thread.State.BLOCKED, first.getState());
        }
    }

    @Test
    void v3HandsMembersOutRoundRobin() {
        PooledGrinder pool = new PooledGrinder();
        assertEquals(10, pool.size());
        for (int round = 0; round < 3; round++) {
            for (int i = 0; i < pool.size(); i++) {
                assertTrue(pool.nextMember() == pool.member(i), "round " + round + " member " + i);
            }
        }
    }

    /** Holds the grinder's own monitor: a call must block until it is released, then complete. */
    private static void assertCallBlocksWhileHolding(Grinder grinder) throws Exception {
        Thread caller = new Thread(() -> grinder.grind(8));
        synchronized (grinder) {
            caller.start();
            awaitState(caller, Thread.State.BLOCKED);
        }
        caller.join(TimeUnit.SECONDS.toMillis(10));
        assertEquals(Thread.State.TERMINATED, caller.getState(), "the call completed once the lock was free");
    }

    private static void awaitState(Thread thread, Thread.State wanted) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (thread.getState() != wanted && System.nanoTime() < deadline) {
            Thread.sleep(5);
        }
        assertEquals(wanted, thread.getState());
    }
}
