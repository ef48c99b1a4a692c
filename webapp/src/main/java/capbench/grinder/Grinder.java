package capbench.grinder;

/**
 * The study's unit of work: build a string by repeatedly appending the current string to a buffer and
 * reversing the buffer's content. Each level doubles the length, the CPU time and (where buffers are not
 * reused) the garbage: level 13 gives 69 x 2^12 = 282,624 characters.
 */
public interface Grinder {

    /** The study's seed string (69 characters). */
    String SEED = "this is just a random string that I'm going to add up many many times";

    /** Grinds {@code level} rounds and returns the built string; every variant returns the same string. */
    String grind(int level);
}
