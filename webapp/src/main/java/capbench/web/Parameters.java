package capbench.web;

import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.regex.Pattern;

/**
 * The checks every endpoint's query string goes through: known names only, each given once, integers within
 * bounds, the user id's shape; every refusal a one-line reason naming the value and what is allowed.
 */
final class Parameters {

    /** The request attribute Tomcat sets when it skipped parameters it could not parse (Globals in catalina). */
    static final String PARSE_FAILED = "org.apache.catalina.parameter_parse_failed";

    private static final Pattern USER_ID = Pattern.compile("[A-Za-z0-9_.-]{1,64}");
    private static final Pattern DIGITS = Pattern.compile("[0-9]{1,9}");
    private static final int QUOTE_LIMIT = 40;

    private final Map<String, String[]> values;

    private Parameters(Map<String, String[]> values) {
        this.values = values;
    }

    /** What an endpoint's parameters parse into; a client's mistake is a BadRequestException. */
    interface Parser<T> {
        T parse(Parameters parameters) throws BadRequestException;
    }

    /**
     * The request's parameters (names from {@code allowed}) parsed, or empty once the client has been answered
     * 400 with the reason: each endpoint's first step.
     */
    static <T> Optional<T> parsedOrRefused(HttpServletRequest req, HttpServletResponse resp, List<String> allowed,
                                           Parser<T> parser) throws IOException {
        try {
            return Optional.of(parser.parse(of(req, allowed)));
        } catch (BadRequestException e) {
            Responses.text(resp, HttpServletResponse.SC_BAD_REQUEST, e.getMessage());
            return Optional.empty();
        }
    }

    /** The request's parameters, refused when Tomcat could not decode them or one is not in {@code allowed}. */
    static Parameters of(HttpServletRequest req, List<String> allowed) throws BadRequestException {
        // Read first: Tomcat parses the query on this first access and only then sets the flag below.
        Map<String, String[]> values = req.getParameterMap();
        // Tomcat skips a parameter it cannot decode (a bad %-escape, more than maxParameterCount) and only flags
        // the request: without this check "level=%zz" would run the default and answer 200, as if the client had
        // asked for nothing. (Bytes that are not UTF-8 decode to U+FFFD and are refused by the value checks.)
        if (req.getAttribute(PARSE_FAILED) != null) {
            throw new BadRequestException("the query string could not be decoded (a bad %-escape"
                    + " or too many parameters); allowed: " + names(allowed));
        }
        return of(values, allowed);
    }

    static Parameters of(Map<String, String[]> values, List<String> allowed) throws BadRequestException {
        for (String name : values.keySet()) {
            if (!allowed.contains(name)) {
                throw new BadRequestException("unknown parameter " + quote(name) + "; allowed: " + names(allowed));
            }
        }
        return new Parameters(values);
    }

    /** The parameter's one value, or null when it is absent. */
    String single(String name) throws BadRequestException {
        String[] given = values.get(name);
        if (given == null) {
            return null;
        }
        if (given.length != 1) {
            throw new BadRequestException("parameter " + quote(name) + " given " + given.length
                    + " times; give it once");
        }
        return given[0];
    }

    /** An integer from {@code min} to {@code max}, or {@code fallback} when absent. */
    int integer(String name, int min, int max, int fallback) throws BadRequestException {
        String text = single(name);
        if (text == null) {
            return fallback;
        }
        String allowed = name + " must be an integer from " + min + " to " + max + ", got " + quote(text);
        if (!DIGITS.matcher(text).matches()) {
            throw new BadRequestException(allowed);
        }
        int value = Integer.parseInt(text);
        if (value < min || value > max) {
            throw new BadRequestException(allowed);
        }
        return value;
    }

    /** The simulated user's opaque id, or null when absent. */
    String user() throws BadRequestException {
        String user = single("user");
        if (user != null && !USER_ID.matcher(user).matches()) {
            throw new BadRequestException("user " + quote(user)
                    + " is not an id of 1 to 64 characters from A-Z a-z 0-9 _ . -");
        }
        return user;
    }

    private static String names(List<String> allowed) {
        return String.join(", ", allowed);
    }

    /** Quotes a client value for an error line: bounded in length, control characters made visible. */
    static String quote(String value) {
        StringBuilder out = new StringBuilder("'");
        int shown = Math.min(value.length(), QUOTE_LIMIT);
        for (int i = 0; i < shown; i++) {
            char c = value.charAt(i);
            if (c < 0x20 || c == 0x7f) {
                out.append(String.format("\\x%02x", (int) c));
            } else {
                out.append(c);
            }
        }
        out.append('\'');
        if (value.length() > QUOTE_LIMIT) {
            out.append(" (").append(value.length() - QUOTE_LIMIT).append(" more characters)");
        }
        return out.toString();
    }
}
