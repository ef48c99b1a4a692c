"""A target that degraded during its search: a rate it carried, and later failed at that rate or below (a hold
that did not hold, a confirm that failed, a lower rate failing after a higher one passed). The rate cannot
explain that; the node's state can. From the steps' own PCP figures, each state series is compared between a
step that carried a rate failed later (P) and the steps that failed after it at that rate or below: what grew
there grew with time, not with the rate. Each such P is tried, earliest first (a heap that fills is seen across
the longest time), and the first that names a cause is said. A series counts as grown when it passes its rule in GROWN (below); the
cause is said in one sentence, and the hint rule "memory-bound by state" fires when the heap or the sessions grew
together with the time spent in GC.

Each transient series is compared with what P showed and with the most the search's failures before P showed
(the overloads above the capacity: requests queued in a failed step hold heap and threads too), so what an
overload alone does is not taken for growth with time. The sessions are no transient: each lasts the
application's timeout after its user's last request, so what the overloads before P opened is still held at P,
and P's own count is their baseline. Sessions that grew by a tenth name the cause of a heap filling with GC (in a
fast hour the capacity is found late, with most of the user pool's sessions already open: 2026-12-03's CI saw the
heap fill while they grew 1.4×); alone, without the heap, they must grow by half. The live heap is a cause together with GC only (a stateless
server's overloaded steps raise it without slowing it), the live threads never. A drift that no state series
explains (a noisy machine, a transient) is not called degraded: the search's own warning says it. Without PCP's
figures (MONITOR=off) its cause is unknown, and it is not called degraded either. The peak heap is no evidence (a collected heap fills to its young generation's size at any rate): the live heap
is its lowest sample in a step, and the live threads grow in any overloaded step, so they are shown, not blamed."""
from __future__ import annotations

from dataclasses import dataclass

from capbench.rundata.records import SEARCH_PHASES, StepRecord
from capbench.rundata.summary import node_figures

SESSIONS_ALONE_RATIO = 1.5  # sessions without a heap filling with GC name a cause when they grew by half
GC_BOUND_PCT = 10.0  # the hints' GC-bound threshold (capbench/analysis/hints.py): a later GC share must reach it


@dataclass(frozen=True)
class Series:
    """A state series of a node's step figures, how it is written, and when it has grown from `before` to `after`."""
    name: str  # the step figure (capbench/metrics/catalogue.py)
    words: str
    unit: str
    min_ratio: float  # after ≥ before × min_ratio …
    min_rise: float  # … and after − before ≥ min_rise …
    min_after: float = 0.0  # … and after ≥ min_after
    lasting: bool = False  # held until a timeout, not released when an overload ends: P's own value is its baseline

    def grew(self, before: float | None, after: float | None) -> bool:
        if after is None:
            return False
        before = before or 0.0
        return after >= before * self.min_ratio and after - before >= self.min_rise and after >= self.min_after


GROWN = (
    Series("sessions_max", "sessions held", "", 1.1, 100, lasting=True),  # alone: SESSIONS_ALONE_RATIO (_cause)
    Series("heap_floor_mb", "live heap", " MB", 1.2, 16),  # a cause together with GC only (_cause)
    Series("gc_time_pct", "GC", " %", 2.0, GC_BOUND_PCT / 2, GC_BOUND_PCT),
    Series("db_pool_waiting_mean", "threads waiting for a DB connection", "", 2.0, 1),
    Series("threads_live", "live threads", "", 1.5, 50),  # shown, never a cause (_cause)
)


def _fmt(value: float | None, unit: str) -> str:
    if value is None:
        return "not measured"
    return f"{value:,.0f}".replace(",", " ") + unit if abs(value) >= 10 else f"{value:.1f}{unit}"


def drifts(steps: list[StepRecord]) -> list[tuple[StepRecord, list[StepRecord], list[StepRecord]]]:
    """Each step P whose rate a later step failed at or below, earliest first, with the failed steps before P (the
    search's overloads, above the capacity) and the failed steps after P at its rate or below; none for a
    monotonic search (every failure above every earlier pass)."""
    searched = sorted((r for r in steps if r.phase in SEARCH_PHASES and r.valid), key=lambda r: r.step)
    found = []
    for i, passed in enumerate(searched):
        rate = passed.result.offered_rps
        later = [r for r in searched[i + 1:] if not r.passed and r.result.offered_rps <= rate]
        if passed.passed and later:
            found.append((passed, [r for r in searched[:i] if not r.passed], later))
    return found


def grown_between(passed: StepRecord, overloaded: list[StepRecord], later: list[StepRecord],
                  nodes: tuple[str, ...] | None) -> dict[str, dict[str, list]]:
    """Per node of `nodes` (default: every node), each series that grew from P to the failures after it beyond
    what the overloads before P showed (a lasting series: beyond P's value): [P's value, the failures' most]."""
    grown: dict[str, dict[str, list]] = {}
    for node, before in node_figures(passed.host_metrics).items():
        if nodes is not None and node not in nodes:
            continue
        for series in GROWN:
            after = _most(later, node, series.name)
            # What an overload alone does to the series (the requests queued in a failed step hold heap and
            # threads), from the search's failures before P: a series grown with time exceeds that too.
            overload = None if series.lasting else _most(overloaded, node, series.name)
            baseline = max((v for v in (before.get(series.name), overload) if v is not None), default=None)
            if series.grew(baseline, after):
                grown.setdefault(node, {})[series.name] = [before.get(series.name), after]
    return grown


def diagnose(label: str, steps: list[StepRecord], heap_max_mb: dict[str, float],
             nodes: tuple[str, ...] | None = None) -> dict | None:
    """{"sentence", "cause", "rate", "step", "nodes": {node: {series: [before, after]}}} for a target whose steps
    drifted (drifts()): the earliest pass whose comparison with the failures after it names a cause; else the
    drift said unexplained (or, without PCP's figures, unknown). None for a monotonic search."""
    candidates = drifts(steps)
    if not candidates:
        return None
    for passed, overloaded, later in candidates:
        grown = grown_between(passed, overloaded, later, nodes)
        cause = _cause(grown)
        if cause is not None:
            return _said(label, passed, grown, cause, heap_max_mb)
    passed, _, later = max(candidates, key=lambda c: c[0].result.offered_rps)
    rate = passed.result.offered_rps
    carried = f"{rate:g}/s was carried at step {passed.step} and failed later"
    if not node_figures(passed.host_metrics) or not any(node_figures(r.host_metrics) for r in later):
        return {"sentence": f"{label}: {carried}; its cause is unknown (no PCP figures: MONITOR=off)",
                "cause": "unknown", "rate": rate, "step": passed.step, "nodes": {}}
    return {"sentence": f"{label}: {carried}; no state series grew beyond what its overloads showed (sessions, "
                        "live heap with GC, GC, DB pool waits): a noisy machine or a transient, not a server that "
                        "degraded", "cause": "unexplained", "rate": rate, "step": passed.step, "nodes": {}}


def _said(label: str, passed: StepRecord, grown: dict, cause: str, heap_max_mb: dict[str, float]) -> dict:
    rate = passed.result.offered_rps
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
    return {"sentence": f"{label} degraded during its search: {'; '.join(parts)}: {cause}; ≥ {rate:g}/s was "
                        f"carried at step {passed.step} and not kept", "cause": cause, "rate": rate,
            "step": passed.step, "nodes": grown}


def _most(records: list[StepRecord], node: str, name: str) -> float | None:
    values = [node_figures(r.host_metrics).get(node, {}).get(name) for r in records]
    return max((v for v in values if v is not None), default=None)


def _cause(grown: dict[str, dict]) -> str | None:
    """The cause the grown series name, or None: the live heap alone (without more GC) or the live threads alone
    explain no failure."""
    names = {name for changes in grown.values() for name in changes}
    if names & {"sessions_max", "heap_floor_mb"} and "gc_time_pct" in names:
        return "memory-bound by its sessions" if "sessions_max" in names else "memory-bound by state"
    sessions = [changes["sessions_max"] for changes in grown.values() if "sessions_max" in changes]
    if any(after >= (before or 0.0) * SESSIONS_ALONE_RATIO for before, after in sessions):
        return "state grew (sessions) while the rate did not"
    if "db_pool_waiting_mean" in names:
        return "waits for the database pool grew"
    if "gc_time_pct" in names:
        return "GC grew while the rate did not"
    return None
