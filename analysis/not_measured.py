"""Why a figure was not measured, in words: a run that broke off, a search skipped because its node was down, a
search that ended without a capacity. The console and the report print these where a figure would be, never a
bare None."""
from __future__ import annotations


def why_no_capacity(summary: dict, label: str) -> str:
    """Why `label` has no capacity, as "not measured: …"."""
    target = (summary.get("targets") or {}).get(label)
    skipped = (summary.get("skipped") or {}).get(label)
    if skipped:
        return f"not measured: {label}'s search was skipped ({skipped})"
    if target is None:
        if summary.get("status") == "partial":
            how = "was interrupted" if summary.get("error") == "interrupted" else f"stopped ({summary.get('error')})"
            return f"not measured: the run {how} before {label}'s search"
        return f"not measured: {label} was not searched"
    searches = target.get("searches") or []
    last = searches[-1] if searches else {}
    if last.get("status") == "node-down":
        return f"not measured: {label}'s search ended: {last.get('reason')}"
    if target.get("capacity_rps") is None:
        return f"not measured: {label} found no capacity ({last.get('status', 'no search')}: {last.get('reason', '-')})"
    return ""


def why_missing(summary: dict, labels: list[str]) -> str:
    """Why a figure made of these labels' capacities is missing: the first one without a capacity, said."""
    for label in labels:
        why = why_no_capacity(summary, label)
        if why:
            return why
    return "not measured"
