package capbench.grinder;

import java.util.Arrays;
import java.util.Optional;
import java.util.function.Supplier;
import java.util.stream.Collectors;

/** The Grinder variants of the study, by the name a client passes as {@code variant}. */
public enum Variant {
    V1("v1", "one shared instance, synchronized, new buffers every round", SynchronizedAllocatingGrinder::new),
    V1_NOSYNC("v1-nosync", "v1 without the lock", AllocatingGrinder::new),
    V2("v2", "one shared instance, synchronized, reusing its two buffers", ReusingGrinder::new),
    V3("v3", "a pool of " + PooledGrinder.DEFAULT_SIZE + " v2 instances handed out round-robin", PooledGrinder::new);

    public static final Variant DEFAULT = V1;

    private final String wireName;
    private final String description;
    private final Supplier<Grinder> factory;

    Variant(String wireName, String description, Supplier<Grinder> factory) {
        this.wireName = wireName;
        this.description = description;
        this.factory = factory;
    }

    public String wireName() {
        return wireName;
    }

    public String description() {
        return description;
    }

    /** A new grinder of this variant; the servlet keeps one per variant for its whole life. */
    public Grinder newGrinder() {
        return factory.get();
    }

    public static Optional<Variant> byWireName(String name) {
        return Arrays.stream(values()).filter(v -> v.wireName.equals(name)).findFirst();
    }

    /** "v1, v1-nosync, v2, v3": for error messages and the index page. */
    public static String allWireNames() {
        return Arrays.stream(values()).map(Variant::wireName).collect(Collectors.joining(", "));
    }
}
