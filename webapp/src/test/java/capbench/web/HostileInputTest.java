package capbench.web;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Hostile input against the webapp as deployed (our web.xml in an embedded Tomcat 10.1): fuzzed {@code level},
 * {@code variant} and {@code user} values, very long query strings, many parameters and odd encodings, sent as
 * raw bytes so that nothing on the client side cleans them up. Every answer must be a client error (400, or
 * 413/414 for sizes) or, for a valid request, 200 with a level within the bound; never a 5xx, never a grind
 * above {@link GrindRequest#MAX_LEVEL}. The random cases come from a fixed seed, so a failure repeats.
 */
class HostileInputTest {

    private static final long SEED = 20261123L;
    private static final int RANDOM_CASES = 600;
    private static final Set<Integer> CLIENT_ERRORS = Set.of(400, 413, 414);
    private static final Pattern LEVEL = Pattern.compile("\"level\":\\s*(\\d+)");
    private static DeployedWebapp webapp;
    private static int port;

    @BeforeAll
    static void startTomcat() throws Exception {
        webapp = new DeployedWebapp();
        port = webapp.port();
    }

    @AfterAll
    static void stopTomcat() throws Exception {
        webapp.stop();
    }

    /** One request as raw bytes on a new connection; the status and body of the answer. */
    private static String[] send(byte[] target) throws IOException {
        ByteArrayOutputStream request = new ByteArrayOutputStream();
        request.write("GET ".getBytes(StandardCharsets.US_ASCII));
        request.write(target);
        request.write(" HTTP/1.1\r\nHost: node\r\nConnection: close\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
        try (Socket socket = new Socket("127.0.0.1", port)) {
            socket.setSoTimeout(30_000);
            IOException writeFailed = null;
            try {
                OutputStream out = socket.getOutputStream();
                out.write(request.toByteArray());
                out.flush();
            } catch (IOException refusedMidway) {
                // Tomcat answers a request line over its limit (e.g. 5 000 parameters) as soon as it has read
                // that much, and closes with the rest unread: our write can then fail ("Broken pipe", seen once
                // in CI) while its answer is already on the way. The answer is what the test judges.
                writeFailed = refusedMidway;
            }
            String answer;
            try {
                answer = new String(readAll(socket.getInputStream()), StandardCharsets.ISO_8859_1);
            } catch (IOException noAnswer) {
                if (writeFailed != null) {
                    noAnswer.addSuppressed(writeFailed);
                }
                throw noAnswer;
            }
            assertTrue(answer.startsWith("HTTP/1.1 "), () -> "no HTTP answer: " + answer);
            return new String[] {answer.substring(9, 12), answer.substring(answer.indexOf("\r\n\r\n") + 4)};
        }
    }

    /** Everything the server sent; a reset after some of it (a close with our request unread) ends it. */
    private static byte[] readAll(InputStream in) throws IOException {
        ByteArrayOutputStream all = new ByteArrayOutputStream();
        byte[] buffer = new byte[8192];
        try {
            for (int n; (n = in.read(buffer)) != -1; ) {
                all.write(buffer, 0, n);
            }
        } catch (IOException reset) {
            if (all.size() == 0) {
                throw reset;
            }
        }
        return all.toByteArray();
    }

    private static void assertHandled(byte[] target) throws IOException {
        String[] answer = send(target);
        int status = Integer.parseInt(answer[0]);
        String shown = new String(target, 0, Math.min(target.length, 120), StandardCharsets.ISO_8859_1);
        if (status == 200) {
            Matcher level = LEVEL.matcher(answer[1]);
            assertTrue(level.find(), () -> "200 without a level for " + shown);
            int grinded = Integer.parseInt(level.group(1));
            assertTrue(grinded >= GrindRequest.MIN_LEVEL && grinded <= GrindRequest.MAX_LEVEL,
                    () -> "ground level " + grinded + " for " + shown);
        } else {
            assertTrue(CLIENT_ERRORS.contains(status), () -> "status " + status + " for " + shown + ": " + answer[1]);
        }
    }

    private static byte[] ascii(String text) {
        return text.getBytes(StandardCharsets.ISO_8859_1);
    }

    /** A value a fuzzer would try: digits near the bound, signs, huge numbers, escapes, bytes of every kind. */
    private static String hostileValue(Random random) {
        String[] seeds = {"16", "17", "0", "-1", "+13", "013", "1e1", "0x10", "99999999999999999999", "13.0",
            " 13", "13 ", "%31%33", "%2531%2533", "%00", "%zz", "%", "%c3%28", "%ff%fe", "%e2%80%ae", "%0d%0a",
            "v1", "V1", "v1%00", "v1-nosync", "v3;", "../v1", "%u0031", "\u00e9", "\u00ff\u00fe", "\t", "+", "&", "="};
        StringBuilder value = new StringBuilder(seeds[random.nextInt(seeds.length)]);
        for (int i = random.nextInt(4); i > 0; i--) {
            int kind = random.nextInt(3);
            if (kind == 0) {
                value.append(seeds[random.nextInt(seeds.length)]);
            } else if (kind == 1) {
                value.append(String.format("%%%02x", random.nextInt(256)));
            } else {
                value.append((char) (0x21 + random.nextInt(0x5e)));
            }
        }
        return value.toString().replace(" ", "%20").replace("#", "%23");
    }

    @Test
    void fuzzedParametersGetClientErrorsOrABoundedGrind() throws IOException {
        Random random = new Random(SEED);
        String[] names = {"level", "variant", "user", "LEVEL", "level[]", "lev%65l", "", "%00", "variant%20"};
        for (int i = 0; i < RANDOM_CASES; i++) {
            List<String> pairs = new ArrayList<>();
            for (int p = 1 + random.nextInt(3); p > 0; p--) {
                pairs.add(names[random.nextInt(names.length)] + "=" + hostileValue(random));
            }
            assertHandled(ascii("/grind?" + String.join("&", pairs)));
        }
    }

    @ParameterizedTest(name = "a query of {0} characters")
    @ValueSource(ints = {2_000, 7_900, 8_200, 20_000, 200_000})
    void veryLongQueriesAreRefusedAsClientErrors(int length) throws IOException {
        String query = "/grind?user=" + "a".repeat(length);
        String[] answer = send(ascii(query));
        assertTrue(CLIENT_ERRORS.contains(Integer.parseInt(answer[0])), () -> "status " + answer[0]);
    }

    @ParameterizedTest(name = "{0} parameters")
    @ValueSource(ints = {4, 100, 1_000, 5_000})
    void manyParametersAreRefusedAsClientErrors(int count) throws IOException {
        StringBuilder query = new StringBuilder("/grind?level=1");
        for (int i = 0; i < count; i++) {
            query.append("&p").append(i).append("=x");
        }
        String[] answer = send(ascii(query.toString()));
        assertTrue(CLIENT_ERRORS.contains(Integer.parseInt(answer[0])), () -> "status " + answer[0]);
    }

    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {
        "/grind?level=%31%36", "/grind?level=%C3%A9", "/grind?variant=%FF", "/grind?user=%E2%80%AE",
        "/grind?level=1%00", "/grind?level=%%%", "/grind?level", "/grind?=", "/grind?&&&", "/grind;jsessionid=x?level=1",
        "/grind?level=1&&level=2", "/grind?level=+1", "/grind?level=1;2"})
    void oddEncodingsAreHandled(String target) throws IOException {
        assertHandled(ascii(target));
    }

    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"/grind/%2e%2e/%2e%2e/etc/passwd", "/../../etc/passwd", "/grind/..%2f..%2fWEB-INF/web.xml",
        "/WEB-INF/web.xml", "/%2e/WEB-INF/web.xml"})
    void pathsOutOfTheAppOrIntoItsInsidesAreRefused(String target) throws IOException {
        int status = Integer.parseInt(send(ascii(target))[0]);
        assertTrue(status == 400 || status == 404, () -> "status " + status + " for " + target);
    }

    @Test
    void rawBytesOutsideAsciiInTheQueryAreHandled() throws IOException {
        byte[] target = {'/', 'g', 'r', 'i', 'n', 'd', '?', 'u', 's', 'e', 'r', '=', (byte) 0xC3, (byte) 0x28,
            (byte) 0xFF, '&', 'l', 'e', 'v', 'e', 'l', '=', '1'};
        assertHandled(target);
    }

    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"/grind?level=%zz", "/grind?level=%", "/grind?level=1%G0", "/grind?variant=v1&x%zz=1"})
    void queriesTomcatCannotDecodeAre400NotIgnored(String target) throws IOException {
        String[] answer = send(ascii(target));
        assertEquals("400", answer[0], () -> target + " gave " + answer[0] + ": " + answer[1]);
        assertTrue(answer[1].startsWith("the query string could not be decoded"), answer[1]);
    }

    @Test
    void theBoundItselfIsServedAndOneAboveIsRefused() throws IOException {
        assertEquals("200", send(ascii("/grind?level=" + GrindRequest.MAX_LEVEL + "&variant=v3"))[0]);
        assertEquals("400", send(ascii("/grind?level=" + (GrindRequest.MAX_LEVEL + 1)))[0]);
    }
}
