package capbench.web;

import capbench.grinder.Variant;
import java.util.List;
import java.util.Map;

/**
 * The validated parameters of {@code GET /grind}.
 *
 * <p>The level is bounded because its cost doubles per level: level 16 already costs 8 times the default
 * level 13 (about 2.3 M characters and, for v1, about 16 MB of garbage per request); an unbounded level
 * would let one request exhaust a node.
 *
 * <p>{@code work} is the Grinder calls a request is owed, in percent of one: 105 makes one request in twenty
 * grind twice, so that the node does 5 % more work per request on average at the same level. It is how a known
 * small change in the work per request is made (make gate-calibrate's "5 % more work"), where a level doubles it.
 *
 * @param user an opaque id of the simulated user, echoed back, or null; load scenarios draw it from a
 *             generated dataset so that nothing benefits from a single hot key
 */
public record GrindRequest(Variant variant, int level, int work, String user) {

    public static final int MIN_LEVEL = 1;
    public static final int MAX_LEVEL = 16;
    public static final int DEFAULT_LEVEL = 13;
    public static final int MIN_WORK = 100;
    public static final int MAX_WORK = 400;
    public static final List<String> PARAMETERS = List.of("variant", "level", "work", "user");

    /** Parses a servlet parameter map; throws with a one-line reason naming the value and what is allowed. */
    public static GrindRequest parse(Map<String, String[]> parameters) throws BadRequestException {
        return parse(Parameters.of(parameters, PARAMETERS));
    }

    static GrindRequest parse(Parameters parameters) throws BadRequestException {
        String variantName = parameters.single("variant");
        Variant variant = Variant.DEFAULT;
        if (variantName != null) {
            variant = Variant.byWireName(variantName).orElseThrow(() -> new BadRequestException(
                    "unknown variant " + quote(variantName) + "; allowed: " + Variant.allWireNames()));
        }
        int level = parameters.integer("level", MIN_LEVEL, MAX_LEVEL, DEFAULT_LEVEL);
        int work = parameters.integer("work", MIN_WORK, MAX_WORK, MIN_WORK);
        return new GrindRequest(variant, level, work, parameters.user());
    }

    static String quote(String value) {
        return Parameters.quote(value);
    }
}
