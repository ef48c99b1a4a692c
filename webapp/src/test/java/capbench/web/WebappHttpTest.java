package capbench.web;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * The webapp as deployed: the real web.xml in an embedded Tomcat 10.1 on a loopback port, spoken to over
 * HTTP. Checks status codes and bodies a client sees, including 400 (never 500) for client mistakes and
 * 503 with Retry-After when the memory budget is full.
 */
class WebappHttpTest {

    private static DeployedWebapp webapp;
    private static String base;
    private static final HttpClient CLIENT = HttpClient.newHttpClient();

    @BeforeAll
    static void startTomcat() throws Exception {
        webapp = new DeployedWebapp();
        base = "http://127.0.0.1:" + webapp.port();
    }

    @AfterAll
    static void stopTomcat() throws Exception {
        webapp.stop();
    }

    private static HttpResponse<String> get(String path) throws Exception {
        return CLIENT.send(HttpRequest.newBuilder(URI.create(base + path)).GET().build(),
                HttpResponse.BodyHandlers.ofString());
    }

    @Test
    void grindDefaultsToV1LevelThirteenAndNamesTheNode() throws Exception {
        HttpResponse<String> response = get("/grind");
        assertEquals(200, response.statusCode());
        assertEquals("application/json;charset=UTF-8", response.headers().firstValue("Content-Type").orElse(""));
        String body = response.body();
        assertTrue(body.startsWith("{\"node\":\""), body);
        assertTrue(body.contains("\"variant\":\"v1\",\"level\":13,\"calls\":1,\"length\":282624,\"grind_ms\":"), body);
    }

    @ParameterizedTest
    @CsvSource({"v1,2208", "v1-nosync,2208", "v2,2208", "v3,2208"})
    void everyVariantAnswersWithTheSameLength(String variant, int length) throws Exception {
        HttpResponse<String> response = get("/grind?variant=" + variant + "&level=6&user=u1");
        assertEquals(200, response.statusCode(), response.body());
        assertTrue(response.body().contains("\"variant\":\"" + variant + "\",\"level\":6,\"calls\":1,\"length\":" + length),
                response.body());
        assertTrue(response.body().contains("\"user\":\"u1\""), response.body());
    }

    @Test
    void allocatingVariantReportsMoreGarbageThanTheReusingOne() throws Exception {
        // Warm both, then compare what one call allocated: the study's v1-vs-v2 difference, per request.
        for (int i = 0; i < 20; i++) {
            get("/grind?variant=v1&level=12");
            get("/grind?variant=v2&level=12");
        }
        long v1 = allocBytes(get("/grind?variant=v1&level=12").body());
        long v2 = allocBytes(get("/grind?variant=v2&level=12").body());
        assertTrue(v1 > 3 * v2, "v1 allocated " + v1 + " bytes, v2 " + v2);
    }

    private static long allocBytes(String body) {
        int at = body.indexOf("\"alloc_bytes\":") + "\"alloc_bytes\":".length();
        int end = at;
        while (Character.isDigit(body.charAt(end))) {
            end++;
        }
        return Long.parseLong(body.substring(at, end));
    }

    @ParameterizedTest(name = "{0} -> 400")
    @CsvSource(delimiter = '|', value = {
        "/grind?level=999|level must be an integer from 1 to 16, got '999'",
        "/grind?variant=zzz|unknown variant 'zzz'; allowed: v1, v1-nosync, v2, v3",
        "/grind?level=abc|level must be an integer from 1 to 16, got 'abc'",
        "/grind?level=|level must be an integer from 1 to 16, got ''",
        "/grind?debug=1|unknown parameter 'debug'; allowed: variant, level, work, user",
        "/grind?level=3&level=4|parameter 'level' given 2 times; give it once",
        // /query refuses before it asks the pool for anything (no database is needed to be told no).
        "/query?rows=0|rows must be an integer from 1 to 1000, got '0'",
        "/query?calls=21|calls must be an integer from 1 to 20, got '21'",
        "/query?write=101|write must be an integer from 0 to 100, got '101'",
        "/query?join=2|join must be an integer from 0 to 1, got '2'",
        "/query?user=a%20b|user 'a b' is not an id of 1 to 64 characters from A-Z a-z 0-9 _ . -",
        "/query?table=x|unknown parameter 'table'; allowed: rows, join, write, calls, user",
        "/session?kb=1025&user=u1|kb must be an integer from 0 to 1024, got '1025'",
        "/session?kb=4|user is required: the id of the user whose session this is",
        "/session?user=u1&page=2|unknown parameter 'page'; allowed: kb, user",
    })
    void clientMistakesGet400WithAOneLineReason(String path, String reason) throws Exception {
        HttpResponse<String> response = get(path);
        assertEquals(400, response.statusCode());
        assertEquals(reason + "\n", response.body());
    }

    @Test
    void aNodeWithoutPoolSettingsAnswersAValidQuery503NamingTheMissingSetting() throws Exception {
        // The test JVM has no DB_* environment (compose.yaml passes tunables.env's to a node): no pool is made.
        HttpResponse<String> response = get("/query?rows=5");
        assertEquals(503, response.statusCode(), response.body());
        assertEquals("1", response.headers().firstValue("Retry-After").orElse(""));
        assertEquals("this node has no database pool: DB_POOL_SIZE is not set (tomcat-conf/tunables.env, passed by "
                + "compose.yaml)\n", response.body());
    }

        @Test
    void aFullMemoryBudgetAnswers503WithRetryAfterAndThenServesAgain() throws Exception {
        // Fill the deployed servlet's own budget, as admitted calls would, so the refusal is certain.
        MemoryAdmission admission = ((GrindServlet) webapp.servlet("grind")).admission();
        HttpResponse<String> refused;
        long started = System.nanoTime();
        try (MemoryAdmission.Reservation everything = admission.reserve(admission.budget()).orElseThrow()) {
            refused = get("/grind?variant=v2&level=3");
        }
        long waitedMillis = (System.nanoTime() - started) / 1_000_000;
        assertEquals(503, refused.statusCode(), refused.body());
        assertEquals("1", refused.headers().firstValue("Retry-After").orElse(""));
        assertEquals("text/plain;charset=UTF-8", refused.headers().firstValue("Content-Type").orElse(""));
        assertTrue(refused.body().startsWith("this node's memory for grinding is in use (")
                && refused.body().endsWith("; retry after 1 s\n")
                && refused.body().indexOf('\n') == refused.body().length() - 1, refused.body());
        assertTrue(waitedMillis >= MemoryAdmission.MAX_WAIT.toMillis(), "refused after " + waitedMillis + " ms");
        assertEquals(0, admission.reserved());
        assertEquals(200, get("/grind?variant=v2&level=3").statusCode());
    }

    @Test
    void aUsersSessionIsFoundAgainByTheCookieNamingItAndKeepsItsKilobytes() throws Exception {
        // What the balancer sends on: the cookie a browser would have sent back, named by the user's id.
        HttpResponse<String> first = getWithCookie("/session?kb=16&user=u-keep", "JSESSIONID=u-keep");
        assertEquals(200, first.statusCode(), first.body());
        assertEquals("new", first.headers().firstValue("X-Session").orElse(""));
        assertTrue(first.body().contains("\"session\":\"new\",\"requests\":1,\"kb\":16,\"user\":\"u-keep\""),
                first.body());
        HttpResponse<String> second = getWithCookie("/session?kb=16&user=u-keep", "JSESSIONID=u-keep");
        assertEquals("found", second.headers().firstValue("X-Session").orElse(""));
        assertTrue(second.body().contains("\"session\":\"found\",\"requests\":2"), second.body());
        // Without the cookie the user is a stranger: a new session, the count starts again.
        HttpResponse<String> stranger = get("/session?kb=16&user=u-keep");
        assertEquals("new", stranger.headers().firstValue("X-Session").orElse(""));
        assertTrue(stranger.body().contains("\"requests\":1"), stranger.body());
    }

    private static HttpResponse<String> getWithCookie(String path, String cookie) throws Exception {
        return CLIENT.send(HttpRequest.newBuilder(URI.create(base + path)).header("Cookie", cookie).GET().build(),
                HttpResponse.BodyHandlers.ofString());
    }

    @Test
    void stateCountsEverySessionWithItsTimeoutAndExpiresThemAll() throws Exception {
        getWithCookie("/session?kb=4&user=u-state1", "JSESSIONID=u-state1");
        getWithCookie("/session?kb=4&user=u-state2", "JSESSIONID=u-state2");
        HttpResponse<String> held = get("/state");
        assertEquals(200, held.statusCode(), held.body());
        long active = number(held.body(), "\"active\":");
        assertTrue(active >= 2, held.body());
        assertTrue(held.body().contains("\"/.timeout_s\":1800"), held.body());  // web.xml's 30 minutes, in s
        HttpResponse<String> expired = CLIENT.send(HttpRequest.newBuilder(URI.create(base + "/state?expire=all"))
                .POST(HttpRequest.BodyPublishers.noBody()).build(), HttpResponse.BodyHandlers.ofString());
        assertEquals(200, expired.statusCode(), expired.body());
        assertEquals(active, number(expired.body(), "\"expired\":"), expired.body());
        assertEquals(0, number(expired.body(), "\"active\":"), expired.body());
        // The user comes back to a new session: the old one is gone.
        HttpResponse<String> again = getWithCookie("/session?kb=4&user=u-state1", "JSESSIONID=u-state1");
        assertEquals("new", again.headers().firstValue("X-Session").orElse(""));
        for (String wrongly : new String[] {"expire=some", "gc=young", "expire=all&gc=minor", ""}) {
            HttpResponse<String> wrong = CLIENT.send(HttpRequest.newBuilder(URI.create(base + "/state?" + wrongly))
                    .POST(HttpRequest.BodyPublishers.noBody()).build(), HttpResponse.BodyHandlers.ofString());
            assertEquals(400, wrong.statusCode(), wrongly);
            assertTrue(wrong.body().contains("expire=all, gc=full, or both"), wrong.body());
        }
    }

    @Test
    void stateCollectsAndGivesTheLiveHeapWhichHoldsTheSessions() throws Exception {
        HttpResponse<String> empty = CLIENT.send(HttpRequest.newBuilder(URI.create(base + "/state?expire=all&gc=full"))
                .POST(HttpRequest.BodyPublishers.noBody()).build(), HttpResponse.BodyHandlers.ofString());
        assertEquals(200, empty.statusCode(), empty.body());
        double before = decimal(empty.body(), "\"heap_live_mb\":");
        // 200 users of 64 kB each: 12.5 MB more of live heap, which only a full collection shows alone.
        for (int user = 0; user < 200; user++) {
            getWithCookie("/session?kb=64&user=u-live" + user, "JSESSIONID=u-live" + user);
        }
        HttpResponse<String> full = CLIENT.send(HttpRequest.newBuilder(URI.create(base + "/state?gc=full"))
                .POST(HttpRequest.BodyPublishers.noBody()).build(), HttpResponse.BodyHandlers.ofString());
        assertEquals(200, full.statusCode(), full.body());
        assertTrue(number(full.body(), "\"active\":") >= 200, full.body());
        double grown = decimal(full.body(), "\"heap_live_mb\":") - before;
        assertTrue(grown >= 12 && grown < 20, "live heap grew by " + grown + " MB: " + full.body());
    }

    @Test
    void stateIsForThisHostsLoopbackOnly() {
        assertTrue(StateServlet.fromLoopback("127.0.0.1"));
        assertTrue(StateServlet.fromLoopback("::1"));
        assertTrue(!StateServlet.fromLoopback("10.89.1.5"), "the balancer's address");
        assertTrue(!StateServlet.fromLoopback(null));
    }

    private static double decimal(String body, String key) {
        java.util.regex.Matcher m = java.util.regex.Pattern.compile(java.util.regex.Pattern.quote(key) + "([\\d.]+)")
                .matcher(body);
        assertTrue(m.find(), key + " in " + body);
        return Double.parseDouble(m.group(1));
    }

    private static long number(String body, String key) {
        java.util.regex.Matcher m = java.util.regex.Pattern.compile(java.util.regex.Pattern.quote(key) + "(\\d+)")
                .matcher(body);
        assertTrue(m.find(), key + " in " + body);
        return Long.parseLong(m.group(1));
    }

    @Test
    void healthIsOk() throws Exception {
        HttpResponse<String> response = get("/health");
        assertEquals(200, response.statusCode());
        assertEquals("ok\n", response.body());
    }

    @Test
    void indexListsTheEndpoints() throws Exception {
        HttpResponse<String> response = get("/");
        assertEquals(200, response.statusCode());
        for (String endpoint : new String[] {"/grind", "/query", "/session", "/health", "/info", "v1-nosync"}) {
            assertTrue(response.body().contains(endpoint), endpoint + " in " + response.body());
        }
    }

    @Test
    void infoNamesTheCollectorInUse() throws Exception {
        HttpResponse<String> response = get("/info");
        assertEquals(200, response.statusCode());
        assertTrue(java.util.regex.Pattern.compile("\"gc\":\"(Serial|Parallel|G1|ZGC|Shenandoah)\"").matcher(response.body()).find(), response.body());
        assertTrue(response.body().contains("\"available_processors\":"), response.body());
        assertTrue(response.body().contains("\"grind_memory_budget_bytes\":"
                + MemoryAdmission.budgetFor(Runtime.getRuntime().maxMemory()) + ","), response.body());
    }

    @Test
    void unknownPathIs404AndPostIsRefused() throws Exception {
        assertEquals(404, get("/manager/html").statusCode());
        HttpResponse<String> post = CLIENT.send(HttpRequest.newBuilder(URI.create(base + "/grind"))
                .POST(HttpRequest.BodyPublishers.noBody()).build(), HttpResponse.BodyHandlers.ofString());
        assertEquals(405, post.statusCode());
    }
}
