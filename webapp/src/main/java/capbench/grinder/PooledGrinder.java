package capbench.grinder;

import java.util.concurrent.atomic.AtomicInteger;

/**
 * The study's third Grinder ({@code v3}): a fixed pool of {@link ReusingGrinder}s handed out round-robin, so up
 * to {@code size} requests grind at once, each holding only its own instance's lock.
 *
 * <p>The study handed instances out from a synchronized static method; an atomic counter gives the same
 * round-robin order without adding a second global lock on top of the one being removed.
 */
public class PooledGrinder implements Grinder {

    /** The study's pool size. */
    public static final int DEFAULT_SIZE = 10;

    private final ReusingGrinder[] members;
    private final AtomicInteger next = new AtomicInteger();

    public PooledGrinder() {
        this(DEFAULT_SIZE);
    }

    public PooledGrinder(int size) {
        if (size < 1) {
            throw new IllegalArgumentException("pool size must be at least 1, got " + size);
        }
        members = new ReusingGrinder[size];
        for (int i = 0; i < size; i++) {
            members[i] = new ReusingGrinder();
        }
    }

    @Override
    public String grind(int level) {
        return nextMember().grind(level);
    }

    ReusingGrinder nextMember() {
        return members[Math.floorMod(next.getAndIncrement(), members.length)];
    }

    /** The pool's instances, in hand-out order (tests hold their locks to see who blocks). */
    ReusingGrinder member(int index) {
        return members[index];
    }

    public int size() {
        return members.length;
    }
}
