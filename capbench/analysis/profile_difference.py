"""What build B spends more on than build A, from two profiles recorded at the same instants at the same rate
(a duet's, capbench/duet/profile.py): each method's CPU samples per thousand requests answered without an error
status, B's against A's. Per request, because the two slots served the same offered rate but not always the same
number of requests. async-profiler (the default) samples each JVM's threads, Java code or native, at least one
interval of CPU time apart (one interval for both slots), and each sample is weighed by the CPU time it stood for
(one the quota delayed stands for more): the rows are then CPU ms. JFR's sampler
(CPU_PROFILER=jfr) takes a thread running Java code every 10 ms, inside the JVM's CPU quota like the threads it
samples, so its samples follow the CPU time the JVM gets too, with two limits: at most 5 threads a tick (500
samples a second at 10 ms), so a JVM near that count is undercounted (each side's samples a second are given to
compare with it); and a thread waiting or in native code is not sampled."""
from __future__ import annotations

PER = 1000  # requests: samples per thousand requests answered
MAX_SAMPLES_PER_S = 500  # the sampler's most: 5 threads every 10 ms
# The method running; anywhere in the stack; the application's methods (neither the JDK's nor the server's)
# anywhere in the stack.
TABLES = {"self": "cpu_self", "total": "cpu_total", "application": "cpu_application"}
SHOWN = 15  # rows of each table: the largest growths
# B's samples a method needs to be listed: one or two samples in a 10-s step are chance (a v3/v1 duet listed
# eleven methods of one sample each, none of them in either build's code).
MIN_SAMPLES = 3


def per_request(rows: list[dict], requests: int, complete: bool) -> tuple[dict[str, float], float]:
    """A table's methods by their weight (CPU ms, or samples: `unit`) per PER requests; and what a method missing
    from it had at most: nothing when the table holds every method sampled, else its last row's (it was cut
    there)."""
    scale = PER / requests
    counts = {r["name"]: r["total"] * scale for r in rows}
    return counts, 0.0 if complete or not rows else rows[-1]["total"] * scale


def grew(a_tables: dict, b_tables: dict, a_requests: int, b_requests: int, top: int,
         shown: int = SHOWN) -> dict[str, list[dict]]:
    """Per table (TABLES): the methods whose weight per PER requests grew most from A to B, largest growth
    first (only those that grew, among the methods of at least MIN_SAMPLES in B's table). A table of `top` rows or more was cut: a method
    missing from A's counts at A's last row (at most: `a_at_most`; its growth is then at least the one shown)."""
    out: dict[str, list[dict]] = {}
    for key, table in TABLES.items():
        a_rows, b_rows = a_tables.get(table) or [], b_tables.get(table) or []
        a, a_missing = per_request(a_rows, a_requests, len(a_rows) < top)
        b, _ = per_request(b_rows, b_requests, True)
        rows = []
        sampled = {r["name"] for r in b_rows if r["count"] >= MIN_SAMPLES}
        for name, b_value in b.items():
            a_value = a.get(name, a_missing)
            if name in sampled and b_value > a_value:
                rows.append({"name": name, "a": round(a_value, 2), "b": round(b_value, 2),
                             "grew": round(b_value - a_value, 2), "a_at_most": name not in a and a_missing > 0})
        rows.sort(key=lambda r: (-r["grew"], r["name"]))
        out[key] = rows[:shown]
    return out


def totals(tables: dict, requests: int) -> float:
    """All of a profile's CPU per PER requests answered: the CPU time its samples stood for (ms), or its samples
    (unit)."""
    return round((tables.get("cpu_time_ms") or tables.get("cpu_samples") or 0) * PER / requests, 2)


def unit(a_tables: dict, b_tables: dict) -> str:
    """What the rows count: CPU ms where both profiles weighed their samples by CPU time (async-profiler's), else
    CPU samples."""
    return "CPU ms" if a_tables.get("cpu_time_ms") and b_tables.get("cpu_time_ms") else "CPU samples"


def samples_per_s(tables: dict) -> float | None:
    """A profile's CPU samples a second (against MAX_SAMPLES_PER_S)."""
    seconds = tables.get("seconds")
    return round((tables.get("cpu_samples") or 0) / seconds, 1) if seconds else None


def sampled_by(a: dict, b: dict) -> dict:
    """How both slots' CPU was sampled: async-profiler's event and interval when both used the same, else why the
    comparison rests on JFR's sampler (the slots' samples are then JFR's, or not alike)."""
    if a.get("by") == b.get("by") == "async-profiler" and a.get("interval_us") == b.get("interval_us"):
        return {"by": "async-profiler", "event": a.get("event"), "interval_us": a.get("interval_us")}
    if a.get("by") == b.get("by") == "JFR" or not (a or b):
        return {"by": "JFR"}
    return {"by": "mixed", "why": f"A's CPU was sampled by {a.get('by') or 'nothing'}, B's by {b.get('by') or 'nothing'}"
                                 " (not alike: read the counts with care)"}
