package capbench.grinder;

/**
 * The study's first Grinder ({@code v1}): one shared instance whose grind method is synchronized, so every
 * request waits for the one before it, and each call still allocates fresh buffers (heavy garbage).
 */
public class SynchronizedAllocatingGrinder extends AllocatingGrinder {

    @Override
    public synchronized String grind(int level) {
        return super.grind(level);
    }
}
