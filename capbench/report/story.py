"""The study's investigation told with a bench-variants run's own numbers: what bound each variant at node1's
capacity (lock, GC, CPU: the figures behind each word), what each change did to capacity, what scale-out
gave, and where our measurements agree with the study's findings or not. Every sentence comes from the run's
summary; nothing is assumed.

The study's findings (one JVM per machine, 2008): removing the lock alone made things slightly worse (more GC
pressure); reusing buffers raised throughput dramatically; the pool of 10 raised it again; three balanced
machines gave more than three times one."""
from __future__ import annotations

from capbench.analysis import hints
from capbench.rundata.summary import Summary

LOCK_BLOCKED_THREADS = 1.0  # request threads BLOCKED on one monitor, mean of the dumps: others queue on a lock
# The study's claims, as (from, to, what it found, test of the ratio to / from).
STUDY = (
    ("v1", "v1-nosync", "removing the lock alone made it slightly worse", lambda r: r < 1.0),
    ("v1-nosync", "v2", "reusing buffers raised throughput dramatically", lambda r: r > 1.5),
    ("v2", "v3", "the pool raised it again", lambda r: r > 1.0),
)


def node1_figures(summary: Summary, variant: str) -> dict:
    """node1's host figures at its capacity with the variant (PCP's, by metric name; empty unmonitored)."""
    target = summary.targets.get(f"node1 {variant}")
    at = target.metrics_at_capacity if target and target.metrics_at_capacity else {}
    return at["node1"] if "node1" in at else {}


def node1_dumps(figures) -> dict:
    """The thread dumps of node1's evidence step (capbench/profiling/threaddump.py), empty without one; `figures`: a
    variant's findings (capbench/kinds/variants.py, VariantFigures)."""
    step = figures.evidence.get("node1")
    return step.thread_dumps["node1"] if step and "node1" in step.thread_dumps else {}


def bound_by(figures: dict, dumps: dict) -> list[str]:
    """What held the variant at node1's capacity, each with its figure."""
    found = []
    for monitor, count in (dumps["blocked_on"] if dumps else {}).items():
        if count >= LOCK_BLOCKED_THREADS:
            found.append(f"lock-bound: {count:g} request threads BLOCKED on {monitor} (mean of "
                         f"{dumps['dumps']} dumps)")
    # PCP's figures by metric name: a node's metrics vary with what was logged (capbench/metrics/catalogue.py)
    gc, cpu, alloc = figures.get("gc_time_pct"), figures.get("cpu_pct_of_quota"), figures.get("alloc_mb_per_s")
    if gc is not None and gc >= hints.GC_BOUND_PCT:
        found.append(f"GC-bound: {gc:g} % of the time in GC at {alloc} MB/s allocated")
    if cpu is not None and cpu >= hints.CPU_SATURATED_PCT:
        found.append(f"CPU-saturated: {cpu:g} % of node1's CPU quota")
    return found


def variant_lines(summary: Summary, variants: dict) -> list[dict]:
    """One entry per variant (capbench/kinds/variants.py's findings, by name): its capacities, its evidence, and what
    bound it."""
    rows = []
    for variant, v in variants.items():
        figures, dumps = node1_figures(summary, variant), node1_dumps(v)
        rows.append({"variant": variant, "node1_rps": v.node1_rps, "cluster_rps": v.cluster_rps,
                     "cluster_over_node1": v.cluster_over_node1,
                     **{k: figures.get(k) for k in ("alloc_mb_per_s", "gc_time_pct", "cpu_pct_of_quota",
                                                    "busy_threads_mean")},  # PCP's, by metric name
                     "blocked": sum(dumps["blocked_on"].values()) if dumps else None,
                     "dumps": dumps, "bound_by": bound_by(figures, dumps)})
    return rows


def story(lines: list[dict], noise_pct: float, repeated: bool = False, quota_ratio: float | None = None) -> list[str]:
    """The paragraphs from variant_lines(): each variant, each of the study's claims against ours, the
    scale-out. repeated: the searches were repeated, so the band holds the run-to-run noise; quota_ratio: the
    nodes' CPU quotas over node1's (the cluster's ideal gain)."""
    rows = {r["variant"]: r for r in lines}
    lines = []
    for r in rows.values():
        if r["node1_rps"] is None:
            lines.append(f"{r['variant']}: no capacity found on node1.")
            continue
        bound = "; ".join(r["bound_by"]) or "no rule fired (neither lock, GC nor CPU past its threshold)"
        lines.append(f"{r['variant']}: node1 {r['node1_rps']:g}/s — {bound}.")
    for before, after, claim, agrees in STUDY:
        if before not in rows or after not in rows or not rows[before]["node1_rps"] or not rows[after]["node1_rps"]:
            continue
        a, b = rows[before]["node1_rps"], rows[after]["node1_rps"]
        ratio = b / a
        change = f"{100 * (ratio - 1):+.0f} %"
        within = abs(100 * (ratio - 1)) <= noise_pct
        verdict = ("within the noise band, so we cannot tell" if within
                   else "as the study found" if agrees(ratio) else "unlike the study")
        if not within and not repeated:
            verdict += " — beyond the search's precision, but with one repeat the run-to-run noise is unmeasured"

        gc_a, gc_b = rows[before]["gc_time_pct"], rows[after]["gc_time_pct"]
        al_a, al_b = rows[before]["alloc_mb_per_s"], rows[after]["alloc_mb_per_s"]
        lines.append(f"{before} → {after}: node1 {a:g} → {b:g}/s ({change}, noise band ±{noise_pct:g} %: {verdict}; "
                     f"the study: {claim}). Allocation {al_a} → {al_b} MB/s, time in GC {gc_a} → {gc_b} %.")
    for r in rows.values():
        if r["cluster_over_node1"]:
            ideal = (f"; with these CPU quotas the ideal is {quota_ratio:.2f} ×, so "
                     f"{r['cluster_over_node1'] / quota_ratio:.2f} of it") if quota_ratio else ""
            lines.append(f"scale-out with {r['variant']}: the cluster {r['cluster_rps']:g}/s = "
                         f"{r['cluster_over_node1']:.2f} × node1 (the study: more than 3 × with three equal "
                         f"machines{ideal}).")
    return lines
