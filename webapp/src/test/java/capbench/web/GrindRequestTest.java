package capbench.web;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import capbench.grinder.Variant;
import java.util.HashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class GrindRequestTest {

    private static Map<String, String[]> query(String... pairs) {
        Map<String, String[]> map = new HashMap<>();
        for (int i = 0; i < pairs.length; i += 2) {
            map.merge(pairs[i], new String[] {pairs[i + 1]}, (a, b) -> {
                String[] both = new String[a.length + b.length];
                System.arraycopy(a, 0, both, 0, a.length);
                System.arraycopy(b, 0, both, a.length, b.length);
                return both;
            });
        }
        return map;
    }

    @Test
    void defaultsAreTheStudysFirstTest() throws Exception {
        GrindRequest request = GrindRequest.parse(query());
        assertEquals(Variant.V1, request.variant());
        assertEquals(13, request.level());
        assertEquals(100, request.work());
        assertNull(request.user());
    }

    @ParameterizedTest
    @CsvSource({"v1,1", "v1-nosync,13", "v2,16", "v3,7"})
    void acceptsEveryVariantAndTheLevelBounds(String variant, int level) throws Exception {
        GrindRequest request = GrindRequest.parse(query("variant", variant, "level", String.valueOf(level),
                "user", "u-00042"));
        assertEquals(variant, request.variant().wireName());
        assertEquals(level, request.level());
        assertEquals("u-00042", request.user());
    }

    @ParameterizedTest(name = "{0}={1} -> {2}")
    @CsvSource(delimiter = '|', value = {
        "level|999|level must be an integer from 1 to 16, got '999'",
        "level|0|level must be an integer from 1 to 16, got '0'",
        "level|17|level must be an integer from 1 to 16, got '17'",
        "level|-3|level must be an integer from 1 to 16, got '-3'",
        "level|abc|level must be an integer from 1 to 16, got 'abc'",
        "level|1e3|level must be an integer from 1 to 16, got '1e3'",
        "level|99999999999999999999|level must be an integer from 1 to 16, got '99999999999999999999'",
        "level|''|level must be an integer from 1 to 16, got ''",
        "work|99|work must be an integer from 100 to 400, got '99'",
        "work|401|work must be an integer from 100 to 400, got '401'",
        "work|5%|work must be an integer from 100 to 400, got '5%'",
        "variant|zzz|unknown variant 'zzz'; allowed: v1, v1-nosync, v2, v3",
        "variant|V1|unknown variant 'V1'; allowed: v1, v1-nosync, v2, v3",
        "variant|''|unknown variant ''; allowed: v1, v1-nosync, v2, v3",
        "user|a b|user 'a b' is not an id of 1 to 64 characters from A-Z a-z 0-9 _ . -",
        "colour|red|unknown parameter 'colour'; allowed: variant, level, work, user",
    })
    void rejectsBadValuesWithAOneLineReason(String name, String value, String reason) {
        BadRequestException e = assertThrows(BadRequestException.class, () -> GrindRequest.parse(query(name, value)));
        assertEquals(reason, e.getMessage());
    }

    @Test
    void acceptsTheWorkPerRequestInPercent() throws Exception {
        assertEquals(105, GrindRequest.parse(query("work", "105")).work());
    }

    @Test
    void rejectsARepeatedParameter() {
        BadRequestException e = assertThrows(BadRequestException.class,
                () -> GrindRequest.parse(query("level", "3", "level", "4")));
        assertEquals("parameter 'level' given 2 times; give it once", e.getMessage());
    }

    @Test
    void quotesHostileValuesBoundedAndVisible() {
        String quoted = GrindRequest.quote("x".repeat(5000) + "\n");
        assertTrue(quoted.endsWith("(4961 more characters)"), quoted);
        assertEquals("'a\\x0ab'", GrindRequest.quote("a\nb"));
        BadRequestException e = assertThrows(BadRequestException.class,
                () -> GrindRequest.parse(query("variant", "v1\r\nX-Injected: 1")));
        assertTrue(!e.getMessage().contains("\n") && !e.getMessage().contains("\r"), e.getMessage());
    }
}
