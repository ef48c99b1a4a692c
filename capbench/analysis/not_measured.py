"""Why a figure was not measured, in words: a machine or node the run lost, a run that broke off, a search
skipped because its node was down, a search that ended without a capacity. The console and the report print
these where a figure would be, never a bare None."""
from __future__ import annotations

from capbench.hosts import topology
from capbench.rundata import events


def stopped(summary: dict) -> str:
    """How a partial run ended: "was interrupted", or "stopped (why)"."""
    return "was interrupted" if summary.get("error") == "interrupted" else f"stopped ({summary.get('error')})"


def why_no_capacity(summary: dict, label: str) -> str:
    """Why `label` has no capacity, as "not measured: …"."""
    target = (summary.get("targets") or {}).get(label)
    skipped = (summary.get("skipped") or {}).get(label)
    ended = not target or not target.get("capacity_rps")
    lost = events.touching(summary.get("events"), topology.IN_ROTATION.get(label.split()[0], ()))
    if ended and lost and (skipped or target is None or any(
            s.get("status") == "node-down" for s in target.get("searches") or [])):
        return f"not measured: {events.short(lost[0])}"
    if skipped:
        return f"not measured: {label}'s search was skipped ({skipped})"
    if target is None:
        if summary.get("status") == "partial":
                return f"not measured: the run {stopped(summary)} before {label}'s search"
        return f"not measured: {label} was not searched"
    searches = target.get("searches") or []
    if not searches and summary.get("status") == "partial":
        return f"not measured: the run {stopped(summary)} during {label}'s search"
    last = searches[-1] if searches else {}
    if last.get("status") == "node-down":
        return f"not measured: {label}'s search ended: {last.get('reason')}"
    if target.get("capacity_rps") is None:
        return f"not measured: {label} found no capacity ({last.get('status', 'no search')}: {last.get('reason', '-')})"
    return ""


def why_cut(summary: dict, label: str) -> str:
    """Why `label`'s search was cut short (a machine or node lost, the search skipped or ended by a node that went
    down), as why_no_capacity says it; "" for a search that ran to its end, with or without a capacity."""
    target = (summary.get("targets") or {}).get(label) or {}
    last = (target.get("searches") or [{}])[-1]
    if target.get("capacity_rps") or not ((summary.get("skipped") or {}).get(label) or last.get("status") == "node-down"):
        return ""
    return why_no_capacity(summary, label)


def why_missing(summary: dict, labels: list[str]) -> str:
    """Why a figure made of these labels' capacities is missing: the first one without a capacity, said."""
    for label in labels:
        why = why_no_capacity(summary, label)
        if why:
            return why
    return "not measured"
