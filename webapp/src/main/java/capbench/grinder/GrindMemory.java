package capbench.grinder;

import com.sun.management.HotSpotDiagnosticMXBean;
import java.lang.management.ManagementFactory;

/**
 * How much heap one Grinder call can hold live at once, by variant and level: what the servlet's memory
 * admission reserves before the call. Derived from the variants' code, so it lives beside them; change a
 * variant's buffers and this must change with it.
 *
 * <p>Every variant ends with the same string of {@code 69 x 2^(level-1)} characters ({@link #resultBytes}).
 * Its characters are all Latin-1 (the {@link Grinder#SEED} is ASCII), so with the JVM's compact strings (on by
 * default since JDK 9) every String and StringBuilder holds one byte per character; with them off, two.
 *
 * <p>{@code v1-nosync} ({@link AllocatingGrinder}) builds fresh copies and any number of calls run at once, so
 * each call's peak is what must be admitted. Its peak is in the last round, once {@code reverse} has built its
 * result: the buffer {@code built} (N bytes, N the final length), {@code built.toString()} (N), the reversing
 * StringBuilder (N) and its {@code toString()} (N), and the previous round's {@code current} (N/2) are all
 * reachable together: 4.5 N. StringBuilder grows to twice its old capacity plus two, which here keeps its
 * capacity about 3 % over its length; 5 N rounds that up. Measured: one level-16 call (N = 2.26 MB) needs
 * {@code -Xmx13m} under Serial, level 15 needs {@code -Xmx7m}, so each extra N costs about 5.3 MB of heap,
 * the collector's layout included (a 2 MB array must fit in one generation).
 *
 * <p>The other variants bound their working memory by construction: {@code v1} lets one call at a time build
 * its copies (its lock), {@code v2} and {@code v3} reuse the buffers of one and of ten instances (about 2 N
 * each, kept between calls). What grows with the number of requests is only each call's returned string,
 * N bytes, held until its answer is written; so N is what one of their calls reserves. Reserving the whole
 * working set for them would turn {@code v1}'s queue on its lock, the very thing the study measures, into
 * refusals, though the threads waiting there hold nothing.
 */
public final class GrindMemory {

    /** The copies of the final string a {@code v1-nosync} call holds at its peak: 4.5, rounded up (see above). */
    public static final int ALLOCATING_PEAK_COPIES = 5;

    /** 1 with compact strings (the JVM's default), else 2; 2 where the JVM does not say. */
    public static final int BYTES_PER_CHAR = compactStrings() ? 1 : 2;

    private GrindMemory() {
    }

    /** Bytes of the string a call at {@code level} returns: {@code 69 x 2^(level-1)} characters. */
    public static long resultBytes(int level) {
        if (level < 1 || level > 30) {
            throw new IllegalArgumentException("level must be from 1 to 30, got " + level);
        }
        return ((long) Grinder.SEED.length() << (level - 1)) * BYTES_PER_CHAR;
    }

    /** The most one call of {@code variant} at {@code level} can add to the live heap, in bytes. */
    public static long liveBytes(Variant variant, int level) {
        return switch (variant) {
            case V1_NOSYNC -> ALLOCATING_PEAK_COPIES * resultBytes(level);
            case V1, V2, V3 -> resultBytes(level);
        };
    }

    private static boolean compactStrings() {
        try {
            HotSpotDiagnosticMXBean hotspot = ManagementFactory.getPlatformMXBean(HotSpotDiagnosticMXBean.class);
            return hotspot != null && Boolean.parseBoolean(hotspot.getVMOption("CompactStrings").getValue());
        } catch (RuntimeException notHotSpot) {
            // Another JVM, or no such option: assume two bytes per character, which over-reserves, never under.
            return false;
        }
    }
}
