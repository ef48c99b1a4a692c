package capbench.web;

import capbench.grinder.Variant;
import java.util.Map;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * The validated parameters of {@code GET /grind}.
 *
 * <p>The level is bounded because its cost doubles per level: level 16 already costs 8 times the default
 * level 13 (about 2.3 M characters and, for v1, about 16 MB of garbage per request); an unbounded level
 * would let one request exhaust a node.
 *
 * @param user an opaque id of the simulated user, echoed back, or null; load scenarios draw it from a
 *             generated dataset so that nothing benefits from a single hot key
 */
public record GrindRequest(Variant variant, int level, String user) {

    public static final int MIN_LEVEL = 1;
    public static final int MAX_LEVEL = 16;
    public static final int DEFAULT_LEVEL = 13;
    public static final Set<String> PARAMETERS = Set.of("variant", "level", "user");

    private static final Pattern USER_ID = Pattern.compile("[A-Za-z0-9_.-]{1,64}");
    private static final Pattern DIGITS = Pattern.compile("[0-9]{1,9}");
    private static final int QUOTE_LIMIT = 40;

    /** Parses a servlet parameter map; throws with a one-line reason naming the value and what is allowed. */
    public static GrindRequest parse(Map<String, String[]> parameters) throws BadRequestException {
        for (String name : parameters.keySet()) {
            if (!PARAMETERS.contains(name)) {
                throw new BadRequestException("unknown parameter " + quote(name)
                        + "; allowed: variant, level, user");
            }
        }
        String variantName = single(parameters, "variant");
        String levelText = single(parameters, "level");
        String user = single(parameters, "user");

        Variant variant = Variant.DEFAULT;
        if (variantName != null) {
            variant = Variant.byWireName(variantName).orElseThrow(() -> new BadRequestException(
                    "unknown variant " + quote(variantName) + "; allowed: " + Variant.allWireNames()));
        }
        int level = DEFAULT_LEVEL;
        if (levelText != null) {
            level = parseLevel(levelText);
        }
        if (user != null && !USER_ID.matcher(user).matches()) {
            throw new BadRequestException("user " + quote(user)
                    + " is not an id of 1 to 64 characters from A-Z a-z 0-9 _ . -");
        }
        return new GrindRequest(variant, level, user);
    }

    private static int parseLevel(String text) throws BadRequestException {
        String allowed = "level must be an integer from " + MIN_LEVEL + " to " + MAX_LEVEL + ", got " + quote(text);
        if (!DIGITS.matcher(text).matches()) {
            throw new BadRequestException(allowed);
        }
        int level = Integer.parseInt(text);
        if (level < MIN_LEVEL || level > MAX_LEVEL) {
            throw new BadRequestException(allowed);
        }
        return level;
    }

    private static String single(Map<String, String[]> parameters, String name) throws BadRequestException {
        String[] values = parameters.get(name);
        if (values == null) {
            return null;
        }
        if (values.length != 1) {
            throw new BadRequestException("parameter " + quote(name) + " given " + values.length
                    + " times; give it once");
        }
        return values[0];
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
