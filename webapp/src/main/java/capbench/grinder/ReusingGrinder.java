package capbench.grinder;

/**
 * The study's second Grinder ({@code v2}): synchronized, and reusing its two buffers across calls, so the only
 * garbage per call is the returned string. The buffers keep their capacity (about 2 x 287 kB at level 13).
 */
public class ReusingGrinder implements Grinder {

    private final StringBuilder built = new StringBuilder();
    private final StringBuilder reversed = new StringBuilder();

    @Override
    public synchronized String grind(int level) {
        reversed.setLength(0);
        reversed.append(SEED);
        built.setLength(0);
        for (int round = 0; round < level; round++) {
            built.append(reversed);
            reversed.setLength(0);
            reversed.append(built).reverse();
        }
        return built.toString();
    }
}
