"""A target that degraded during its search: a rate it carried, and later failed at that rate or below (a hold
that did not hold, a confirm that failed, a lower rate failing after a higher one passed). The rate cannot
explain that; the node's state can. From the steps' own PCP figures, each state series is compared between the
last step that carried the highest rate (P) and the steps that failed after it at that rate or below: what grew
there grew with time, not with the rate. A series counts as grown when it passes its rule in GROWN (below); the
cause is said in one sentence, and the hint rule "memory-bound by state" fires when the heap or the sessions grew
together with the time spent in GC.

Each series is compared with what P showed and with the most the search's failures before P showed (the
overloads above the capacity: requests queued in a failed step hold heap and threads too), so what an overload
alone does is not taken for growth with time. The live heap is a cause together with GC only (a stateless
server's overloaded steps raise it without slowing it), the live threads never. A drift that no state series
explains (a noisy machine, a transient) is not called degraded: the search's own warning says it. Without PCP's
figures (MONITOR=off) its cause is unknown, and it is not called degraded either. The peak heap is no evidence (a collected heap fills to its young generation's size at any rate): the live heap
is its lowest sample in a step, and the live threads grow in any overloaded step, so they are shown, not blamed."""
from __future__ import annotations

from dataclasses import dataclass

from rundata.records import SEARCH_PHASES, StepRecord
from rundata.summary import node_figures

GC_BOUND_PCT = 10.0  # the hints' GC-bound threshold (analysis/hints.py): a later GC share must reach it


@dataclass(frozen=True)
class Series:
    """A state series of a node's step figures, how it is written, and when it has grown from `before` to `after`."""
    name: str  # the step figure (metrics/catalogue.py)
    words: str
    unit: str
    min_ratio: float  # after ≥ before × min_ratio …
    min_rise: float  # … and after − before ≥ min_rise …
    min_after: float = 0.0  # … and after ≥ min_after

    def grew(self, before: float | None, after: float | None) -> bool:
        if after is None:
            return False
        before = before or 0.0
        return after >= before * self.min_ratio and after - before >= self.min_rise and after >= self.min_after


GROWN = (
    Series("sessions_max", "sessions held", "", 1.5, 100),
    Series("heap_floor_mb", "live heap", " MB", 1.2, 16),  # a cause together with GC only (_cause)
    Series("gc_time_pct", "GC", " %", 2.0, GC_BOUND_PCT / 2, GC_BOUND_PCT),
    Series("db_pool_waiting_mean", "threads waiting for a DB connection", "", 2.0, 1),
    Series("threads_live", "live threads", "", 1.5, 50),  # shown, never a cause (_cause)
)


def _fmt(value: float | None, unit: str) -> str:
    if value is None:
        return "not measured"
    return f"{value:,.0f}".replace(",", " ") + unit if abs(value) >= 10 else f"{value:.1f}{unit}"


def drift(steps: list[StepRecord]) -> tuple[StepRecord, list[StepRecord], list[StepRecord]] | None:
    """The step P that carried the highest rate later failed, the failed steps before it (the search's overloads,
    above the capacity), and the failed steps after it at P's rate or below; None when every failure came above
    every earlier pass (a monotonic search)."""
    searched = sorted((r for r in steps if r.phase in SEARCH_PHASES and r.valid), key=lambda r: r.step)
    for i, failed in enumerate(searched):
        if failed.passed:
            continue
        carried = [r for r in searched[:i] if r.passed and r.result.offered_rps >= failed.result.offered_rps]
        if carried:
            best = max(r.result.offered_rps for r in carried)
            passed = [r for r in carried if r.result.offered_rps == best][-1]
            later = [r for r in searched if r.step > passed.step and not r.passed
                     and r.result.offered_rps <= best]
            return passed, [r for r in searched if r.step < passed.step and not r.passed], later
    return None


def diagnose(label: str, steps: list[StepRecord], heap_max_mb: dict[str, float],
             nodes: tuple[str, ...] | None = None) -> dict | None:
    """{"sentence", "cause", "rate", "step", "nodes": {node: {series: [before, after]}}} for a target whose steps
    drifted (drift()), the cause named where a state series of one of its `nodes` (default: every node) grew;
    None for a monotonic search."""
    found = drift(steps)
    if found is None:
        return None
    passed, overloaded, later = found
    rate = passed.result.offered_rps
    kept = f"≥ {rate:g}/s was carried at step {passed.step} and not kept"
    carried = f"{rate:g}/s was carried at step {passed.step} and failed later"
    before_nodes = {node: figures for node, figures in node_figures(passed.host_metrics).items()
                    if nodes is None or node in nodes}
    if not before_nodes or not any(node_figures(r.host_metrics) for r in later):
        return {"sentence": f"{label}: {carried}; its cause is unknown (no PCP figures: MONITOR=off)",
                "cause": "unknown", "rate": rate, "step": passed.step, "nodes": {}}
    grown: dict[str, dict[str, list]] = {}
    for node, before in before_nodes.items():
        for series in GROWN:
            after = _most(later, node, series.name)
            # What an overload alone does to the series (the requests queued in a failed step hold heap and
            # threads), from the search's failures before P: a series grown with time exceeds that too.
            baseline = max((v for v in (before.get(series.name), _most(overloaded, node, series.name))
                            if v is not None), default=None)
            if series.grew(baseline, after):
                grown.setdefault(node, {})[series.name] = [before.get(series.name), after]
    cause = _cause(grown)
    if cause is None:
        return {"sentence": f"{label}: {carried}; no state series grew beyond what its overloads showed (sessions, "
                            "live heap with GC, GC, DB pool waits): a noisy machine or a transient, not a server that "
                            "degraded", "cause": "unexplained", "rate": rate, "step": passed.step, "nodes": {}}
    parts = []
    for node, changes in grown.items():
        words = []
        for series in GROWN:
            if series.name in changes:
                a, b = changes[series.name]
                of = (f" of {heap_max_mb[node]:.0f} MB" if series.name.startswith("heap") and heap_max_mb.get(node)
                      else "")
                words.append(f"{series.words} {_fmt(a, '')} → {_fmt(b, series.unit)}{of}")
        parts.append((f"{node}: " if len(grown) > 1 or node != label.split()[0] else "") + ", ".join(words))
    return {"sentence": f"{label} degraded during its search: {'; '.join(parts)}: {cause}; {kept}",
            "cause": cause, "rate": rate, "step": passed.step, "nodes": grown}


def _most(records: list[StepRecord], node: str, name: str) -> float | None:
    values = [node_figures(r.host_metrics).get(node, {}).get(name) for r in records]
    return max((v for v in values if v is not None), default=None)


def _cause(grown: dict[str, dict]) -> str | None:
    """The cause the grown series name, or None: the live heap alone (without more GC) or the live threads alone
    explain no failure."""
    names = {name for changes in grown.values() for name in changes}
    if names & {"sessions_max", "heap_floor_mb"} and "gc_time_pct" in names:
        return "memory-bound by its sessions" if "sessions_max" in names else "memory-bound by state"
    if "sessions_max" in names:
        return "state grew (sessions) while the rate did not"
    if "db_pool_waiting_mean" in names:
        return "waits for the database pool grew"
    if "gc_time_pct" in names:
        return "GC grew while the rate did not"
    return None
