package capbench.grinder;

import static org.junit.jupiter.api.Assertions.assertEquals;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

class GrinderTest {

    /**
     * The expected string, derived by hand rather than by running the algorithm: level 1 is the seed; level 2
     * is seed + reverse(seed), a palindrome; from then on each level appends the palindrome's own reverse,
     * i.e. itself, so level n >= 2 is (seed + reverse(seed)) repeated 2^(n-2) times.
     */
    static String expected(int level) {
        if (level == 1) {
            return Grinder.SEED;
        }
        String unit = Grinder.SEED + new StringBuilder(Grinder.SEED).reverse();
        return unit.repeat(1 << (level - 2));
    }

    @ParameterizedTest
    @EnumSource(Variant.class)
    void everyVariantBuildsTheExpectedString(Variant variant) {
        Grinder grinder = variant.newGrinder();
        for (int level = 1; level <= 14; level++) {
            String result = grinder.grind(level);
            assertEquals(69L << (level - 1), result.length(), variant + " length at level " + level);
            assertEquals(expected(level), result, variant + " content at level " + level);
        }
    }

    @ParameterizedTest
    @EnumSource(Variant.class)
    void reusedBuffersGiveTheSameResultAfterALargerCall(Variant variant) {
        Grinder grinder = variant.newGrinder();
        grinder.grind(12);
        assertEquals(expected(3), grinder.grind(3), variant + " after a larger call");
    }

    @ParameterizedTest
    @EnumSource(Variant.class)
    void levelThirteenIsTheStudysSize(Variant variant) {
        assertEquals(282_624, variant.newGrinder().grind(13).length());
    }
}
