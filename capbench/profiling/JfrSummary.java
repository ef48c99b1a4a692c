// What one node's JDK Flight Recorder recording says, as one JSON object on standard output: CPU samples by
// method (self: the top frame; total: anywhere in the stack), monitors entered after a wait by the monitor's
// class, parks by the parked-on class (a pool's borrow; idle request threads apart), allocation samples by
// class, GC pauses, exceptions and errors thrown by class, each wait and throw with its most frequent stack,
// the throwables created between the JVM's first and last periodic counts, the container's CPU throttling, and the
// objects sampled when allocated and alive when the recording was dumped, by what holds them (their paths to GC
// roots, which the dump computes when asked: capbench/hosts/jfr.py asks).
//
// Run by the JDK's source launcher (`java capbench/profiling/JfrSummary.java REC.jfr TOP FROM_MS TO_MS PLATFORM SERVER
// [CPU_STACKS]`):
// one file, no build, the JDK's own reader (jdk.jfr.consumer), which knows every version's format.
// capbench/profiling/summary.py calls it, and gives it the JDK's package prefixes and the server's (Tomcat's and its
// monitoring's): a method in neither is the application's, whose CPU samples are counted apart too.
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import jdk.jfr.consumer.RecordedClass;
import jdk.jfr.consumer.RecordedEvent;
import jdk.jfr.consumer.RecordedFrame;
import jdk.jfr.consumer.RecordedObject;
import jdk.jfr.consumer.RecordedStackTrace;
import jdk.jfr.consumer.RecordingFile;

public class JfrSummary {
    static final int STACK_SHOWN = 8; // frames of a group's most frequent stack
    static final String IDLE_QUEUE = "org.apache.tomcat.util.threads.TaskQueue.";
    static final int PATH_SHOWN = 16; // steps of an old object's most frequent path to its GC root
    static final String DUMPED = "jdk.OldObjectSample"; // written by the dump after the window, not inside it
    static final int HOLDERS_NAMED = 2; // classes not the JDK's on that path that name who holds it
    // How a frame ran, as flame graph tools mark it in the collapsed format (their colours); a native frame bare.
    static final Map<String, String> FRAME_TYPE_SUFFIX =
        Map.of("Interpreted", "_[0]", "JIT compiled", "_[j]", "Inlined", "_[i]");

    /** Events of one kind grouped by a key: how many, their total (ms or bytes), the largest one. */
    static final class Tally {
        long count;
        double total;
        double largest;
        final Map<String, Integer> stacks = new HashMap<>();

        void add(double amount) {
            count++;
            total += amount;
            largest = Math.max(largest, amount);
        }
    }

    final Map<String, Tally> cpuSelf = new HashMap<>();
    final Map<String, Tally> cpuTotal = new HashMap<>();
    final Map<String, Tally> cpuApplication = new HashMap<>();
    final Map<String, Tally> monitors = new HashMap<>();
    final Map<String, Tally> parks = new HashMap<>();
    final Map<String, Tally> allocation = new HashMap<>();
    final Map<String, Tally> gcPauses = new HashMap<>();
    final Map<String, Tally> exceptions = new HashMap<>();
    final Map<String, Tally> errors = new HashMap<>();
    final Map<String, Tally> heldBy = new HashMap<>();
    final Map<String, Long> cpuStacks = new LinkedHashMap<>(); // each sample's stack, root first: the CPU graph's
    final List<String> platform; // the JDK's packages: not who holds an object
    final List<String> server; // the server's own packages (Tomcat's, its monitoring's): not the application's
    long cpuSamples;
    long oldObjects;
    long idleParks;
    long truncatedStacks;
    final List<Long> exceptionCounts = new ArrayList<>();
    final List<long[]> throttling = new ArrayList<>(); // elapsed slices, throttled slices, throttled ns
    Instant first;
    Instant last;

    JfrSummary(List<String> platform, List<String> server) {
        this.platform = platform;
        this.server = server;
    }

    static String method(RecordedFrame frame) {
        var m = frame.getMethod();
        return m == null ? "(unknown)" : m.getType().getName() + "." + m.getName();
    }

    static String className(RecordedEvent event, String field) {
        RecordedClass cls = event.hasField(field) ? event.getClass(field) : null;
        return cls == null ? "(none)" : readable(cls.getName());
    }

    /** An array class as Java source writes it ("[B" is byte[], "[Ljava.lang.String;" java.lang.String[]). */
    static String readable(String name) {
        int dims = 0;
        while (dims < name.length() && name.charAt(dims) == '[') dims++;
        if (dims == 0) return name;
        String element = switch (name.substring(dims)) {
            case "Z" -> "boolean";
            case "B" -> "byte";
            case "C" -> "char";
            case "S" -> "short";
            case "I" -> "int";
            case "J" -> "long";
            case "F" -> "float";
            case "D" -> "double";
            default -> name.substring(dims + 1, name.length() - 1);
        };
        return element + "[]".repeat(dims);
    }

    static String typeName(RecordedObject oldObject) {
        RecordedClass type = oldObject.getValue("type");
        return type == null ? "(unknown)" : readable(type.getName().replace('/', '.'));
    }

    static double ms(Duration duration) {
        return duration.toNanos() / 1e6;
    }

    static Tally tally(Map<String, Tally> map, String key) {
        return map.computeIfAbsent(key, k -> new Tally());
    }

    void read(RecordedEvent event) {
        // By their ends: a wait that began before the recording is written when it ends, inside it.
        if (event.getEventType().getName().equals(DUMPED)) {
            held(event); // not part of the window's length
            return;
        }
        Instant at = event.getEndTime();
        if (first == null || at.isBefore(first)) first = at;
        if (last == null || at.isAfter(last)) last = at;
        switch (event.getEventType().getName()) {
            case "jdk.ExecutionSample" -> sample(event.getStackTrace());
            case "jdk.JavaMonitorEnter" ->
                counted(monitors, className(event, "monitorClass"), ms(event.getDuration()), event.getStackTrace());
            case "jdk.ThreadPark" -> park(event);
            case "jdk.ObjectAllocationSample" ->
                counted(allocation, className(event, "objectClass"), event.getLong("weight"), event.getStackTrace());
            case "jdk.GarbageCollection" -> tally(gcPauses, event.getString("name")).add(ms(event.getDuration("sumOfPauses")));
            case "jdk.JavaExceptionThrow" ->
                counted(exceptions, className(event, "thrownClass"), 1, event.getStackTrace());
            case "jdk.JavaErrorThrow" -> counted(errors, className(event, "thrownClass"), 1, event.getStackTrace());
            case "jdk.ExceptionStatistics" -> exceptionCounts.add(event.getLong("throwables"));
            case "jdk.ContainerCPUThrottling" -> throttling.add(new long[] {event.getLong("cpuElapsedSlices"),
                event.getLong("cpuThrottledSlices"), event.getDuration("cpuThrottledTime").toNanos()});
            default -> { }
        }
    }

    // One live object and the chain of references from its GC root to it, written from the object outwards
    // ("StandardSession.attributes": that field of a StandardSession refers to the step before). Grouped by the
    // first classes on the chain that are not the JDK's (not the collections it passes through): who holds it.
    void held(RecordedEvent event) {
        oldObjects++;
        RecordedObject object = event.getValue("object");
        List<String> path = new ArrayList<>();
        List<String> holders = new ArrayList<>();
        path.add(object == null ? "(unknown)" : typeName(object));
        while (object != null) {
            RecordedObject reference = object.getValue("referrer");
            object = reference == null ? null : reference.getValue("object");
            if (object == null) break;
            String holder = typeName(object);
            int skipped = reference.getInt("skip");
            if (skipped > 0) path.add("(" + skipped + " references left out)");
            RecordedObject field = reference.getValue("field");
            RecordedObject array = reference.getValue("array");
            path.add(field != null ? holder + "." + field.getString("name")
                : array != null ? holder + " (an element)" : holder);
            if (notTheJdks(holder) && !holders.contains(holder) && holders.size() < HOLDERS_NAMED) holders.add(holder);
        }
        RecordedObject root = event.getValue("root");
        if (root != null) path.add("GC root: " + root.getString("system") + ", " + root.getString("type"));
        String key = !holders.isEmpty() ? String.join(" <- ", holders)
            : path.size() == 1 && root == null ? "(no path to a GC root: garbage not yet collected)"
            : "(the JDK's objects only)";
        Tally t = tally(heldBy, key);
        t.add(1);
        t.stacks.merge(String.join("\n", path.subList(0, Math.min(path.size(), PATH_SHOWN))), 1, Integer::sum);
    }

    boolean notTheJdks(String cls) {
        return !cls.endsWith("[]") && platform.stream().noneMatch(cls::startsWith);
    }

    void park(RecordedEvent event) {
        if (idle(event.getStackTrace())) {
            idleParks++;
        } else {
            counted(parks, className(event, "parkedClass"), ms(event.getDuration()), event.getStackTrace());
        }
    }

    void sample(RecordedStackTrace stack) {
        cpuSamples++;
        if (stack == null || stack.getFrames().isEmpty()) {
            tally(cpuSelf, "(no Java frame)").add(1);
            cpuStacks.merge("(no Java frame)", 1L, Long::sum);
            return;
        }
        if (stack.isTruncated()) truncatedStacks++;
        List<RecordedFrame> frames = stack.getFrames();
        List<String> rootFirst = new ArrayList<>();
        for (int i = frames.size() - 1; i >= 0; i--) {
            RecordedFrame frame = frames.get(i);
            rootFirst.add(method(frame).replace(' ', '_') + FRAME_TYPE_SUFFIX.getOrDefault(frame.getType(), ""));
        }
        cpuStacks.merge(String.join(";", rootFirst), 1L, Long::sum);
        tally(cpuSelf, method(frames.get(0))).add(1);
        Set<String> seen = new HashSet<>(); // a recursive method counts once per sample
        for (RecordedFrame frame : frames) {
            String name = method(frame);
            if (!seen.add(name)) continue;
            tally(cpuTotal, name).add(1);
            if (notTheJdks(name) && server.stream().noneMatch(name::startsWith)) tally(cpuApplication, name).add(1);
        }
    }

    // The top frames that only say how a thread waits or throws (the throwable's constructor and Throwable's
    // own frames; the JDK's parking and locking machinery) are left out of a stack shown, so it starts where
    // the code threw or waited.
    static boolean machinery(String method) {
        return method.endsWith(".<init>") || method.startsWith("java.lang.Throwable.")
            || method.startsWith("java.util.concurrent.") || method.startsWith("jdk.internal.misc.Unsafe.");
    }

    /** The event counted under `key`, with `amount`, and its stack (machinery left out) for the most frequent. */
    static void counted(Map<String, Tally> map, String key, double amount, RecordedStackTrace stack) {
        Tally t = tally(map, key);
        t.add(amount);
        if (stack == null) return;
        List<String> shown = new ArrayList<>();
        for (RecordedFrame frame : stack.getFrames()) {
            String name = method(frame);
            if (shown.isEmpty() && machinery(name)) continue;
            shown.add(name);
            if (shown.size() == STACK_SHOWN) break;
        }
        t.stacks.merge(String.join("\n", shown), 1, Integer::sum);
    }

    // A pool's thread with no task parks in its executor's queue (a request thread in Tomcat's TaskQueue, which
    // capbench/profiling/threaddump.py calls idle too): it waits for work, not for a resource. Counted apart from the parks.
    static boolean idle(RecordedStackTrace stack) {
        if (stack == null) return false;
        for (RecordedFrame frame : stack.getFrames()) {
            String name = method(frame);
            if (name.startsWith(IDLE_QUEUE) || name.endsWith("ThreadPoolExecutor.getTask")) return true;
        }
        return false;
    }

    // A tiny JSON writer: the values here are strings, numbers, lists and maps only.
    static String json(Object value) {
        if (value == null) return "null";
        if (value instanceof String s) {
            StringBuilder out = new StringBuilder("\"");
            for (char c : s.toCharArray()) {
                switch (c) {
                    case '"' -> out.append("\\\"");
                    case '\\' -> out.append("\\\\");
                    case '\n' -> out.append("\\n");
                    default -> out.append(c < 0x20 ? String.format("\\u%04x", (int) c) : String.valueOf(c));
                }
            }
            return out.append('"').toString();
        }
        if (value instanceof Double d) return Double.isFinite(d) ? String.format(java.util.Locale.ROOT, "%.3f", d) : "null";
        if (value instanceof Number) return value.toString();
        if (value instanceof Map<?, ?> map) {
            List<String> parts = new ArrayList<>();
            map.forEach((k, v) -> parts.add(json(String.valueOf(k)) + ":" + json(v)));
            return "{" + String.join(",", parts) + "}";
        }
        List<String> parts = new ArrayList<>();
        for (Object item : (List<?>) value) parts.add(json(item));
        return "[" + String.join(",", parts) + "]";
    }

    /** The `top` largest groups by total, each as {name, count, total, largest[, stack]}. */
    static List<Map<String, Object>> top(Map<String, Tally> map, int top) {
        List<Map<String, Object>> rows = new ArrayList<>();
        map.entrySet().stream()
            .sorted((a, b) -> Double.compare(b.getValue().total, a.getValue().total))
            .limit(top)
            .forEach(e -> {
                Map<String, Object> row = new LinkedHashMap<>();
                row.put("name", e.getKey());
                row.put("count", e.getValue().count);
                row.put("total", e.getValue().total);
                row.put("largest", e.getValue().largest);
                e.getValue().stacks.entrySet().stream().max(Map.Entry.comparingByValue())
                    .ifPresent(s -> row.put("stack", List.of(s.getKey().split("\n"))));
                rows.add(row);
            });
        return rows;
    }

    Map<String, Object> summary(int top) {
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("seconds", first == null ? 0.0 : Duration.between(first, last).toMillis() / 1000.0);
        out.put("cpu_samples", cpuSamples);
        out.put("truncated_stacks", truncatedStacks);
        out.put("cpu_self", top(cpuSelf, top));
        out.put("cpu_total", top(cpuTotal, top));
        out.put("cpu_application", top(cpuApplication, top));
        out.put("monitors_ms", top(monitors, top));
        out.put("parks_ms", top(parks, top));
        out.put("idle_parks", idleParks);
        out.put("allocation_bytes", top(allocation, top));
        out.put("gc_pauses_ms", top(gcPauses, top));
        out.put("exceptions", top(exceptions, top));
        out.put("errors", top(errors, top));
        out.put("old_objects", oldObjects);
        out.put("held_by", top(heldBy, top));
        out.put("throwables_created", exceptionCounts.size() < 2 ? null
            : exceptionCounts.get(exceptionCounts.size() - 1) - exceptionCounts.get(0));
        if (throttling.size() >= 2) {
            long[] a = throttling.get(0);
            long[] b = throttling.get(throttling.size() - 1);
            Map<String, Object> t = new LinkedHashMap<>();
            t.put("periods", b[0] - a[0]);
            t.put("throttled_periods", b[1] - a[1]);
            t.put("throttled_ms", (b[2] - a[2]) / 1e6);
            out.put("throttling", t);
        } else {
            out.put("throttling", null);
        }
        return out;
    }

    // A recording's file holds whole chunks, which may begin before it started (the JVM's earlier recordings):
    // only the events that ended inside the window asked for are counted, and the old objects the dump after it
    // wrote (at its end).
    // With a seventh argument, the CPU samples' stacks are written to that file as well, one line per stack (its
    // frames from the root, separated by ';', then the number of samples): the format flame graph tools read,
    // from which the CPU graph is drawn (the converter, given the recording, adds the JDK's native-method samples).
    public static void main(String[] args) throws IOException {
        if (args.length != 6 && args.length != 7) {
            System.err.println("usage: java JfrSummary.java RECORDING.jfr TOP FROM_EPOCH_MS TO_EPOCH_MS "
                + "PLATFORM_PREFIXES SERVER_PREFIXES [CPU_STACKS_OUT] (prefixes comma-separated: java.,jdk.)");
            System.exit(2);
        }
        JfrSummary summary = new JfrSummary(List.of(args[4].split(",")), List.of(args[5].split(",")));
        Instant from = Instant.ofEpochMilli(Long.parseLong(args[2]));
        Instant to = Instant.ofEpochMilli(Long.parseLong(args[3]));
        try (RecordingFile file = new RecordingFile(Path.of(args[0]))) {
            while (file.hasMoreEvents()) {
                RecordedEvent event = file.readEvent();
                boolean dumped = event.getEventType().getName().equals(DUMPED);
                if (!event.getEndTime().isBefore(from) && (dumped || !event.getEndTime().isAfter(to))) summary.read(event);
            }
        }
        if (args.length == 7) {
            StringBuilder lines = new StringBuilder();
            summary.cpuStacks.forEach((stack, count) -> lines.append(stack).append(' ').append(count).append('\n'));
            Files.writeString(Path.of(args[6]), lines);
        }
        System.out.println(json(summary.summary(Integer.parseInt(args[1]))));
    }
}
