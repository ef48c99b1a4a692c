"""The report's profiles (profiles.html): per label profiled at its capacity, its overhead and, per node, the
flame graphs' links and the recording's tables, from profiles.json (engine/profile_step.py)."""
from __future__ import annotations

from dataclasses import replace

from analysis import profile_facts
from analysis.hints import Hint
from profiling.stacks import MIN_TO_RANK
from report.sections import RunResults

SHOWN = 10  # rows of each table in the report (profiles.json keeps more)
MB = 2**20


def _share(rows: list[dict], whole: float) -> list[dict]:
    return [{**r, "pct": 100 * r["total"] / whole if whole else None} for r in rows[:SHOWN]]


def _in_mb(holders: list[dict] | None) -> list[dict]:
    return [{**h, "mb": h["bytes"] / MB} for h in (holders or [])[:SHOWN]]


def node_tables(tables: dict) -> dict:
    """One node's tables as the report shows them: CPU methods (the application's apart) with their share of the
    CPU time the samples stood for (async-profiler's) or of the samples (JFR's), monitors and parks in ms, the
    threads' time on and waiting for a CPU, allocation classes with their share of the samples' weight, GC pauses,
    exceptions with their stack, throttling, and the live objects sampled by what holds them (their share of
    those samples)."""
    samples = tables.get("cpu_samples") or 0
    cpu_whole = tables.get("cpu_time_ms") or samples  # what the CPU rows' totals add up to
    allocation = tables.get("allocation_bytes") or []
    allocated = sum(r["total"] for r in allocation)
    return {"samples": samples, "cpu_time_ms": tables.get("cpu_time_ms"), "seconds": tables.get("seconds"),
            "truncated": tables.get("truncated_stacks"),
            "cpu_self": _share(tables.get("cpu_self") or [], cpu_whole),
            "cpu_total": _share(tables.get("cpu_total") or [], cpu_whole),
            "cpu_application": _share(tables.get("cpu_application") or [], cpu_whole),
            "cpu_application_self": _share(tables.get("cpu_application_self") or [], cpu_whole),
            "cpu_own": _share(tables.get("cpu_own") or [], cpu_whole),
            "ranked": profile_facts.ranked(tables), "min_to_rank": MIN_TO_RANK,
            "monitors": (tables.get("monitors_ms") or [])[:SHOWN], "parks": (tables.get("parks_ms") or [])[:SHOWN],
            "idle_parks": tables.get("idle_parks"), "thread_time": (tables.get("thread_time") or [])[:SHOWN],
            "thread_seconds": tables.get("thread_seconds"),
            "allocation": _share(allocation, allocated),
            "gc": tables.get("gc_pauses_ms") or [],
            "thrown": [*(tables.get("exceptions") or [])[:SHOWN], *(tables.get("errors") or [])[:SHOWN]],
            "throwables_created": tables.get("throwables_created"), "throttling": tables.get("throttling"),
            "old_objects": tables.get("old_objects"), "held_by": _share(tables.get("held_by") or [],
                                                                       tables.get("old_objects") or 0)}


def sampler(how: dict | None) -> str:
    """Who took the CPU samples, in words: async-profiler's event and interval, or JFR and why."""
    if not how or how.get("by") != "async-profiler":
        why = (how or {}).get("why")
        return "JFR's execution sampler" + (f" ({why})" if why else "")
    return (f"async-profiler ({how['event']}, samples at least {how['interval_us']} µs of CPU time apart: one that the "
            "quota delays stands for more)")


def blocks(results: RunResults) -> list[dict]:
    """One block per label profiled, in the order profiled."""
    out = []
    for label, found in (results.analysis("profiles") or {}).items():
        nodes = []
        for node, read in found.get("nodes", {}).items():
            nodes.append({"node": node, "recording": read.get("recording"),
                          "flame_graphs": read.get("flame_graphs") or {},
                          "cpu_profiler": sampler(read.get("cpu_profiler")),
                          "tables": node_tables(read["tables"]) if read.get("tables") else None,
                          "heap": _in_mb(read.get("heap_holders")),
                          "heap_not_the_jdks": _in_mb(read.get("heap_classes_not_the_jdks"))})
        out.append({"label": label, **{k: found.get(k) for k in ("offered_rps", "seconds", "unprofiled",
                                                                   "profiled", "overhead", "problems")},
                    "overhead_cost": profile_facts.overhead_cost(found.get("overhead")), "nodes": nodes})
    return out


def cited(found: list[Hint], profile: dict | None) -> list[Hint]:
    """The hints, each with what its node's profile at the same label's capacity says behind it (a lock-bound
    node: the monitor waited on longest), where that node was profiled."""
    nodes = (profile or {}).get("nodes") or {}
    out = []
    for hint in found:
        facts = profile_facts.cite(hint.kind, (nodes.get(hint.host) or {}).get("tables"))
        out.append(replace(hint, text=f"{hint.text}. The profile at this capacity: {facts}") if facts else hint)
    return out
