package capbench.grinder;

/**
 * The study's first Grinder without its lock ({@code v1-nosync}): every round allocates fresh buffers and
 * intermediate strings, about 2 MB of garbage per call at level 13.
 *
 * <p>StringBuilder stands in for the study's StringBuffer: the study's StringBuffers were never shared between
 * threads, so their internal locks were uncontended and are not what the variants compare; the lock that
 * matters is the explicit one on {@link SynchronizedAllocatingGrinder#grind}.
 */
public class AllocatingGrinder implements Grinder {

    @Override
    public String grind(int level) {
        StringBuilder built = new StringBuilder();
        String current = SEED;
        for (int round = 0; round < level; round++) {
            built.append(current);
            current = reverse(built.toString());
        }
        return built.toString();
    }

    private static String reverse(String s) {
        return new StringBuilder(s).reverse().toString();
    }
}
