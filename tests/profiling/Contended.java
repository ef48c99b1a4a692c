// A program whose recording the profile's tests read: four threads that queue on one monitor (Shared), park on a
// blocker (Borrow), allocate (Payload), keep some of what they allocate in a registry (Registry's Kept, as a
// session manager keeps sessions) and throw and swallow an exception, for two seconds, beside an executor's
// thread that has no task (idle). It waits for a line on its input before the work (the recording started) and
// for the end of its input after it (the recording written), saying "ready" and "done".
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.locks.LockSupport;

public class Contended {
    static final class Shared { }
    static final class Borrow { }
    static final class Payload {
        final byte[] bytes = new byte[4096];
    }

    static final class Kept {
        final byte[] bytes = new byte[256 * 1024];
    }
    static final class Registry {
        final List<Kept> kept = new CopyOnWriteArrayList<>();
    }

    static final Shared SHARED = new Shared();
    static final Registry REGISTRY = new Registry();
    static volatile Object sink;

    public static void main(String[] args) throws Exception {
        System.out.println("ready");
        System.in.read();
        ExecutorService idle = Executors.newSingleThreadExecutor();
        idle.submit(() -> { }); // its thread starts, then waits for a next task that never comes
        Thread[] threads = new Thread[4];
        for (int i = 0; i < threads.length; i++) {
            threads[i] = new Thread(Contended::work, "worker-" + i);
            threads[i].start();
        }
        for (Thread thread : threads) thread.join();
        idle.shutdown(); // the idle thread's park ends, so the recording has it
        System.out.println("done");
        while (System.in.read() >= 0) { }
    }

    static void work() {
        long end = System.nanoTime() + 2_000_000_000L;
        while (System.nanoTime() < end) {
            synchronized (SHARED) {
                spin(20); // the others wait longer than the recorder's 10 ms threshold
            }
            LockSupport.parkNanos(new Borrow(), 15_000_000L);
            for (int k = 0; k < 1000; k++) sink = new Payload();
            REGISTRY.kept.add(new Kept());
            try {
                throw new IllegalStateException("swallowed");
            } catch (IllegalStateException swallowed) {
                sink = swallowed;
            }
        }
    }

    // The clock is read once per 10 000 square roots: a thread inside System.nanoTime is in native code, which
    // the recorder's CPU sampler skips.
    static void spin(long ms) {
        long until = System.nanoTime() + ms * 1_000_000L;
        double x = 0;
        while (System.nanoTime() < until) {
            for (int k = 0; k < 10_000; k++) x += Math.sqrt(x + k);
        }
        sink = x;
    }
}
