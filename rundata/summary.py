"""summary.json's per-target figures and the rules that read them, written once: which steps belong to a
search, the capacities its repeats found, and the host figures at a capacity."""
from __future__ import annotations

import statistics

from rundata import workload

SUMMARY_SCHEMA = "capbench-summary/1"
HISTORY_SCHEMA = "capbench-history/1"  # a line of results/history.jsonl


def of_label(record: dict, label: str) -> bool:
    """Whether a step belongs to a search label ("node1", "cluster v2", "node1 monitor on"); steps recorded
    before steps carried their label belong to the label's first word, their target."""
    if record.get("label"):
        return record["label"] == label
    return record["target"] == label.split()[0]


def found_capacities(searches: list[dict]) -> list[float]:
    """The capacities a target's repeated searches found."""
    return [s["capacity_rps"] for s in searches if s.get("capacity_rps") and s.get("status") == "found"]


def capacity_of(searches: list[dict]) -> float | None:
    """The median capacity over a target's repeated searches (None when none found one)."""
    caps = found_capacities(searches)
    return statistics.median(caps) if caps else None


def interval_of(searches: list[dict]) -> list[float] | None:
    """Where the capacity may lie by everything the repeats saw: from the lowest low end of their intervals
    (load/search.py: the bracket, widened by steps that disagreed) to the highest high end."""
    intervals = [s["interval_rps"] for s in searches if s.get("interval_rps")]
    return [min(i[0] for i in intervals), max(i[1] for i in intervals)] if intervals else None


def target_summary(searches: list[dict]) -> dict:
    """A target's entry in summary.json: its capacity (the median of its repeats), each repeat's, the spread,
    the interval the searches saw, and the searches that ran out of steps before the precision."""
    caps = found_capacities(searches)
    return {"capacity_rps": capacity_of(searches), "repeats": caps, "interval_rps": interval_of(searches),
            "unresolved": [s["interval_rps"] for s in searches if s.get("status") == "unresolved"],
            "min_rps": min(caps) if caps else None, "max_rps": max(caps) if caps else None,
            "spread_pct": round(100 * (max(caps) - min(caps)) / statistics.median(caps), 1) if len(caps) > 1 else None,
            "searches": searches}


def steps_at(records: list[dict], label: str, capacity: float | None) -> list[dict]:
    """The label's passed steps at the capacity found, in order (none for no capacity; with REPEATS the
    median's rate may not have been measured). Evidence steps (thread dumps) are left out."""
    if capacity is None:
        return []
    return [r for r in records if of_label(r, label) and r.get("passed") and r["offered_rps"] == capacity
            and r.get("phase") != "evidence"]


def metrics_at(records: list[dict], label: str, capacity: float | None) -> dict | None:
    """The host figures of the label's last logged step at the capacity found (steps_at), or None. When no step
    ran at it (the median of an even number of repeats lies between two), the passed rate nearest to it stands
    for it (the lower of two as near), and its step number says which."""
    at = [r for r in steps_at(records, label, capacity) if "host_metrics" in r]
    if not at and capacity is not None:
        logged = [r for r in records if of_label(r, label) and r.get("passed") and "host_metrics" in r
                  and r.get("phase") != "evidence"]
        nearest = min((r["offered_rps"] for r in logged), key=lambda rate: (abs(rate - capacity), rate), default=None)
        at = [r for r in logged if r["offered_rps"] == nearest]
    return {"step": at[-1]["step"], **at[-1]["host_metrics"]} if at else None


def node_figures(host_metrics: dict | None) -> dict[str, dict]:
    """The nodes' entries of a step's host_metrics (the others are the balancer's, the load host's and the
    request cross-check): those with a grind request rate, counted or not."""
    return {host: figures for host, figures in (host_metrics or {}).items()
            if isinstance(figures, dict) and "grind_requests_per_s" in figures}


def serving_nodes(host_metrics: dict | None) -> dict[str, dict]:
    """The nodes that served requests in a step (the workload's requests counted: /grind, /query or /session), with their
    figures."""
    return {host: figures for host, figures in node_figures(host_metrics).items()
            if any(figures.get(f"{servlet}_requests_per_s") for servlet in workload.SERVLETS)}
