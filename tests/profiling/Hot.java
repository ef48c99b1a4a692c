// A program whose CPU profile the truth test reads: two threads that spend nearly all their CPU in one named
// method, Hot.grind, which does what the Grinder's v3 does (append a buffer to another and reverse it: the JIT's
// array-copy intrinsics), and after each round ask the JVM for the bytes the thread allocated, the native call
// JFR's sampler blamed for 97 % of v3's samples (issue 54). It waits for a line on its input before the work (the
// sampler started) and for the end of its input after it (the samples written), saying "ready" and "done".
import java.lang.management.ManagementFactory;

public class Hot {
    static volatile long sink;

    public static void main(String[] args) throws Exception {
        System.out.println("ready");
        System.in.read();
        Thread[] threads = new Thread[2];
        for (int i = 0; i < threads.length; i++) {
            threads[i] = new Thread(Hot::work, "worker-" + i);
            threads[i].start();
        }
        for (Thread thread : threads) thread.join();
        System.out.println("done");
        while (System.in.read() >= 0) { }
    }

    static void work() {
        com.sun.management.ThreadMXBean threads = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
        StringBuilder built = new StringBuilder();
        StringBuilder reversed = new StringBuilder();
        // 1.5 s of this thread's CPU time, however busy the machine: the samples' count does not depend on it.
        while (threads.getCurrentThreadCpuTime() < 1_500_000_000L) {
            sink += grind(built, reversed, 13);
            sink += threads.getCurrentThreadAllocatedBytes();
        }
    }

    static int grind(StringBuilder built, StringBuilder reversed, int level) {
        reversed.setLength(0);
        reversed.append("capbench");
        built.setLength(0);
        for (int round = 0; round < level; round++) {
            built.append(reversed);
            reversed.setLength(0);
            reversed.append(built).reverse();
        }
        return built.length();
    }
}
