"""The load hosts of a run that sent from several (LOAD_HOSTS > 1): each generator's share of the step at every
target's capacity beside its CPU (its own count and PCP's), and over the run's passed steps how far any
generator's share of what was achieved strayed from an even one (how evenly they sent, whatever the server
let through) and how far after the agreed instant any generator started. None for one load host. From the
steps' records alone (their `generators`): summary.json's `load_hosts`, which the console and report.html show."""
from __future__ import annotations

from capbench.rundata.records import StepRecord, usage_json
from capbench.rundata.summary import steps_at


def share_rows(record: StepRecord) -> list[dict]:
    """Each generator of one step: what it was asked, what it achieved, its share of the step's achieved and
    its departure from an even split of the offered rate (%), its CPU (its shares as the record writes them)."""
    generators = record.result.generators
    total = sum(g.achieved_rps for g in generators)
    even = record.result.offered_rps / len(generators) if generators else 0
    pcp = record.host_metrics or {}
    rows = []
    for g in generators:
        usage = usage_json(g.loadhost) or {}
        rows.append({"host": g.host, "tool": g.tool, "offered_rps": g.offered_rps,
                     "connections": g.connections, "achieved_rps": g.achieved_rps,
                     "share_pct": round(100 * g.achieved_rps / total, 2) if total else None,
                     "share_off_pct": round(100 * (len(generators) * g.achieved_rps / total - 1), 2)
                     if total else None,
                     "off_even_pct": round(100 * (g.achieved_rps - even) / even, 2) if even else None,
                     "start_skew_ms": g.start_skew_ms, "cpu_pct": usage.get("cpu_pct"),
                     "cpus": usage.get("cpus_available"), "tool_cpu_wait_pct": usage.get("tool_cpu_wait_pct"),
                     "pcp_cores": (pcp.get(g.host) or {}).get("generator_cpu_cores"),
                     "behind_schedule": g.behind_schedule})
    return rows


def load_hosts(records: list[StepRecord], targets: dict[str, dict]) -> dict | None:
    """None when no step had more than one generator; `targets` as summary.json has them (their capacity)."""
    several = [r for r in records if len(r.result.generators) > 1]
    if not several:
        return None
    passed = [r for r in several if r.passed]
    offs = [abs(row["share_off_pct"]) for r in passed for row in share_rows(r) if row["share_off_pct"] is not None]
    skews = [g.start_skew_ms for r in several for g in r.result.generators if g.start_skew_ms is not None]
    at_capacity = {}
    for label, target in targets.items():
        at = steps_at(several, label, target.get("capacity_rps"))
        at = [r for r in at if r.host_metrics is not None] or at  # the step the PCP figures at capacity come from
        if at:
            at_capacity[label] = {"step": at[-1].step, "rate": at[-1].result.offered_rps,
                                  "rows": share_rows(at[-1])}
    return {"hosts": [g.host for g in several[0].result.generators], "steps": len(several),
            "passed_steps": len(passed), "max_share_off_pct": max(offs) if offs else None,
            "max_start_skew_ms": max(skews) if skews else None, "at_capacity": at_capacity}
