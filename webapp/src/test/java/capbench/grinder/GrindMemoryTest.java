package capbench.grinder;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/** The memory estimate the admission reserves, against what the grinders really return. */
class GrindMemoryTest {

    @ParameterizedTest
    @EnumSource(Variant.class)
    void resultBytesAreTheReturnedStringsLength(Variant variant) {
        Grinder grinder = variant.newGrinder();
        for (int level = 1; level <= 16; level++) {
            assertEquals(grinder.grind(level).length() * (long) GrindMemory.BYTES_PER_CHAR,
                    GrindMemory.resultBytes(level), variant + " at level " + level);
        }
    }

    @Test
    void theJvmsDefaultCompactStringsGiveOneBytePerCharacter() {
        // The tests run with the JVM's defaults, as the nodes do: compact strings on, so Latin-1 text is one
        // byte per character. Seen off, the estimate doubles rather than falls short.
        assertEquals(1, GrindMemory.BYTES_PER_CHAR);
    }

    @Test
    void onlyTheUnlockedAllocatingVariantReservesItsWholeWorkingSet() {
        long n = GrindMemory.resultBytes(16);
        assertEquals(2_260_992L, n);
        assertEquals(5 * n, GrindMemory.liveBytes(Variant.V1_NOSYNC, 16));
        for (Variant bounded : new Variant[] {Variant.V1, Variant.V2, Variant.V3}) {
            assertEquals(n, GrindMemory.liveBytes(bounded, 16), bounded.wireName());
        }
        assertEquals(1_413_120L, GrindMemory.liveBytes(Variant.V1_NOSYNC, 13));
    }

    @Test
    void levelsOutsideTheRangeAreRefused() {
        assertThrows(IllegalArgumentException.class, () -> GrindMemory.resultBytes(0));
        assertThrows(IllegalArgumentException.class, () -> GrindMemory.resultBytes(31));
    }
}
