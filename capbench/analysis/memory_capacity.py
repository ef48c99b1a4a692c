"""The memory capacity of an application (seed 002's question): how many sessions a node's heap holds, and so how
many new users a second it sustains. Best from two full collections, before and after a search (capbench/engine/node_state.py):
the live heap they leave, against the sessions held then; everything else the search left in the heap (a cache
it filled) is charged to the sessions, which errs on the safe side. Without them, from every monitored step in which
the node served requests and held sessions: the step's lowest heap sample (capbench/metrics/catalogue.py's heap_floor_mb,
which still holds the garbage young collections promoted) against the sessions held (sessions_max), fitted by least
squares, with the slope's standard error. The slope is the heap one session keeps (kB per session); the
sessions the heap holds are those that fill it to HEAP_FULL_PCT of its maximum, past which the collector runs
nearly all the time (the petclinic of seed 002, the stateful application of docs/findings.md); a session lives
for the application's timeout after its user's last request, so the heap sustains sessions held / timeout new
users per second."""
from __future__ import annotations

import math
import statistics

from capbench.rundata.records import StepRecord
from capbench.rundata.summary import serving_nodes

HEAP_FULL_PCT = 80.0  # the live heap past which the collector takes most of the time (an assumption, stated)
MIN_POINTS = 4  # steps with sessions
MIN_SESSIONS_SPAN = 100  # between the fewest and the most sessions held: less says nothing about a slope
MIN_T = 3.0  # the slope at least this many standard errors: a node beside the search (its warm-up steps) is not


def fit(points: list[tuple[float, float]]) -> tuple[float, float, float | None]:
    """(slope, intercept, slope's standard error) of y over x; the error None with fewer than three points."""
    xs, ys = [p[0] for p in points], [p[1] for p in points]
    slope, intercept = statistics.linear_regression(xs, ys)
    if len(points) < 3:
        return slope, intercept, None
    residual = sum((y - (intercept + slope * x)) ** 2 for x, y in points) / (len(points) - 2)
    spread = sum((x - statistics.fmean(xs)) ** 2 for x in xs)
    return slope, intercept, math.sqrt(residual / spread) if spread else None


Collected = tuple[tuple[float, float], tuple[float, float]]  # (sessions, live heap MB) before and after a search


def collections_of(targets: dict, node: str) -> list[Collected]:
    """Per search of the node, the sessions and live heap its full collections found before and after it (only
    where both read a live heap: a JVM that ignores System.gc() gives none)."""
    found = []
    for target in targets.values():
        for search in target.get("searches") or []:
            before = ((search.get("state_before") or {}).get("nodes") or {}).get(node) or {}
            after = ((search.get("state_after") or {}).get("nodes") or {}).get(node) or {}
            ends = [(e.get("active"), e.get("heap_live_mb")) for e in (before, after)]
            if all(sessions is not None and heap is not None for sessions, heap in ends):
                found.append(((float(ends[0][0]), float(ends[0][1])), (float(ends[1][0]), float(ends[1][1]))))
    return found


def of_node(steps: list[StepRecord], node: str, heap_max_mb: float | None, timeout_s: float | None,
            collected: list[Collected] = ()) -> dict | None:
    """The node's memory capacity: from the search whose full collections saw the most sessions added, else from
    its steps; None where neither held enough sessions to say. (An idle node's live heap drifts with its own
    housekeeping, not with the sessions it keeps.)"""
    result = _from_collections(collected) or _from_steps(steps, node)
    if result is None:
        return None
    slope_mb, base_mb = result.pop("slope_mb"), result.pop("base_mb")
    result.update(base_heap_mb=round(base_mb, 1), heap_max_mb=heap_max_mb, timeout_s=timeout_s,
                  sessions_heap_holds=None, new_users_per_s=None)
    if "why_not" in result:
        return result
    if heap_max_mb is None:
        result["why_not"] = "the node's maximum heap is not known (its /info did not answer)"
        return result
    holds = max(0.0, (heap_max_mb * HEAP_FULL_PCT / 100 - base_mb) / slope_mb)
    result["sessions_heap_holds"] = int(holds)
    if timeout_s:
        result["new_users_per_s"] = round(holds / timeout_s, 2)
    else:
        result["why_not"] = "the application's session timeout was not read (STATE_BETWEEN's /state)"
    return result


def _from_collections(collected: list[Collected]) -> dict | None:
    widest = max(collected, key=lambda c: c[1][0] - c[0][0], default=None)
    if widest is None or widest[1][0] - widest[0][0] < MIN_SESSIONS_SPAN:
        return None
    (sessions_before, live_before), (sessions_after, live_after) = widest
    slope_mb = (live_after - live_before) / (sessions_after - sessions_before)
    result = {"method": "collections", "kb_per_session": round(slope_mb * 1024, 2), "kb_per_session_se": None,
              "sessions": [int(sessions_before), int(sessions_after)], "live_heap_mb": [live_before, live_after],
              "sessions_seen_max": int(sessions_after), "slope_mb": slope_mb,
              "base_mb": live_before - sessions_before * slope_mb}
    if slope_mb <= 0:
        result["why_not"] = "its live heap did not grow with the sessions it held"
    return result


def _from_steps(steps: list[StepRecord], node: str) -> dict | None:
    points = []
    for record in steps:
        figures = serving_nodes(record.host_metrics).get(node) or {}
        sessions, heap = figures.get("sessions_max"), figures.get("heap_floor_mb")
        if sessions is not None and heap is not None and sessions > 0:
            points.append((float(sessions), float(heap)))
    if len(points) < MIN_POINTS or max(p[0] for p in points) - min(p[0] for p in points) < MIN_SESSIONS_SPAN:
        return None
    slope_mb, base_mb, error_mb = fit(points)
    result = {"method": "steps", "kb_per_session": round(slope_mb * 1024, 2),
              "kb_per_session_se": round(error_mb * 1024, 2) if error_mb is not None else None,
              "points": len(points), "sessions_seen_max": int(max(p[0] for p in points)),
              "slope_mb": slope_mb, "base_mb": base_mb}
    if slope_mb <= 0 or error_mb is None or slope_mb < MIN_T * error_mb:
        result["why_not"] = "its live heap did not follow the sessions it held closely enough to count them"
    return result


def _rate(value: float) -> str:
    """A rate to three significant figures, never in exponent form: 316, 55.5, 1710."""
    return f"{float(f'{value:.3g}'):g}"


def sentence(node: str, m: dict) -> str:
    """One line for the console and the report."""
    error = f" ± {m['kb_per_session_se']:g}" if m.get("kb_per_session_se") is not None else ""
    if m.get("method") == "collections":
        (before, after), (heap_before, heap_after) = m["sessions"], m["live_heap_mb"]
        how = (f"full collections before and after a search: {before} → {after} sessions, "
               f"{heap_before:g} → {heap_after:g} MB")
    else:
        how = f"{m['points']} steps, up to {m['sessions_seen_max']} sessions"
    line = f"{node}: {m['kb_per_session']:g}{error} kB of live heap per session ({how})"
    if m.get("sessions_heap_holds") is None and m.get("why_not"):
        return line + f"; not a memory capacity: {m['why_not']}"
    if m.get("sessions_heap_holds") is not None:
        line += (f"; its {m['heap_max_mb']:.0f} MB heap holds about {m['sessions_heap_holds']} sessions "
                 f"(to {HEAP_FULL_PCT:g} % full)")
    if m.get("new_users_per_s") is not None:
        line += (f"; with a {m['timeout_s'] / 60:g}-minute session timeout it sustains about "
                 f"{_rate(m['new_users_per_s'])} new users/s")
    elif m.get("why_not"):
        line += f"; no sustainable rate of new users: {m['why_not']}"
    return line


def unsustained(label: str, at_capacity: dict, capacities: dict[str, dict]) -> dict | None:
    """Where the capacity starts more sessions a second on a node than its heap sustains: a rate held for a
    few seconds, or a minute, that fills the heap if kept (sessions live for the timeout). None where every
    node keeps up, or nothing says."""
    short = {}
    for node, m in capacities.items():
        started = ((at_capacity or {}).get(node) or {}).get("sessions_started_per_s")
        sustained = m.get("new_users_per_s")
        if started and sustained is not None and started > sustained:
            short[node] = {"sessions_started_per_s": started, "new_users_per_s": sustained,
                           "full_after_s": round(m["sessions_heap_holds"] / started)}
    if not short:
        return None
    worst = max(short, key=lambda node: short[node]["sessions_started_per_s"] / short[node]["new_users_per_s"])
    w = short[worst]
    sentence = (f"{label}'s capacity is not sustained by memory: at it {worst} starts "
                f"{_rate(w['sessions_started_per_s'])} sessions/s, more than the {_rate(w['new_users_per_s'])} new "
                f"users/s its heap sustains; kept up, the heap is full after about {w['full_after_s']} s (make the "
                "hold longer than that, HOLD_S, to see it fail)")
    return {"nodes": short, "sentence": sentence}
