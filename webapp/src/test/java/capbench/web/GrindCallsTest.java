package capbench.web;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class GrindCallsTest {

    @Test
    void oneCallPerRequestAtAHundredPercent() {
        for (long n = 1; n <= 1000; n++) {
            assertEquals(1, GrindServlet.calls(n, 100));
        }
    }

    @ParameterizedTest
    @ValueSource(ints = {101, 105, 150, 233, 400})
    void anyRunOfRequestsMakesTheirShareOfCallsWithinOne(int work) {
        // Wherever a run starts (the counter is shared by every request the servlet serves), its calls are
        // work/100 per request, within one call.
        for (long start : new long[] {1, 7, 1_000_003}) {
            long calls = 0;
            int requests = 2000;
            for (long n = start; n < start + requests; n++) {
                int made = GrindServlet.calls(n, work);
                assertTrue(made == work / 100 || made == work / 100 + 1, "calls " + made + " at work " + work);
                calls += made;
            }
            assertEquals(requests * work / 100.0, calls, 1.0, "work " + work + " from request " + start);
        }
    }
}
