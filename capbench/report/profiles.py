"""The report's profiles (profiles.html): per label profiled at its capacity, its overhead and, per node, the
flame graphs' links and the recording's tables, from profiles.json (capbench/engine/profile_step.py)."""
from __future__ import annotations

from dataclasses import asdict, replace

from capbench.analysis import profile_facts
from capbench.analysis.hints import Hint
from capbench.profiling import record as profile_record
from capbench.profiling.record import Profile, ProfileTables
from capbench.profiling.stacks import MIN_TO_RANK
from capbench.report.sections import RunResults

SHOWN = 10  # rows of each table in the report (profiles.json keeps more)
MB = 2**20


def _share(rows: list[dict], whole: float) -> list[dict]:
    return [{**r, "pct": 100 * r["total"] / whole if whole else None} for r in rows[:SHOWN]]


def _in_mb(holders: list[dict]) -> list[dict]:
    return [{**h, "mb": h["bytes"] / MB} for h in holders[:SHOWN]]


def node_tables(tables: ProfileTables) -> dict:
    """One node's tables as the report shows them: CPU methods (the application's apart) with their share of the
    CPU time the samples stood for (async-profiler's) or of the samples (JFR's), monitors and parks in ms, the
    threads' time on and waiting for a CPU, allocation classes with their share of the samples' weight, GC pauses,
    exceptions with their stack, throttling, and the live objects sampled by what holds them (their share of
    those samples)."""
    cpu_whole = tables.cpu_time_ms or tables.cpu_samples  # what the CPU rows' totals add up to
    allocated = sum(r["total"] for r in tables.allocation_bytes)
    return {"samples": tables.cpu_samples, "cpu_time_ms": tables.cpu_time_ms, "seconds": tables.seconds,
            "truncated": tables.truncated_stacks,
            **{key: _share(getattr(tables, key), cpu_whole)
               for key in ("cpu_self", "cpu_total", "cpu_application", "cpu_application_self", "cpu_own")},
            "ranked": profile_facts.ranked(asdict(tables)), "min_to_rank": MIN_TO_RANK,
            "monitors": tables.monitors_ms[:SHOWN], "parks": tables.parks_ms[:SHOWN],
            "idle_parks": tables.idle_parks, "thread_time": tables.thread_time[:SHOWN],
            "thread_seconds": tables.thread_seconds,
            "allocation": _share(tables.allocation_bytes, allocated),
            "gc": tables.gc_pauses_ms,
            "thrown": [*tables.exceptions[:SHOWN], *tables.errors[:SHOWN]],
            "throwables_created": tables.throwables_created, "throttling": tables.throttling,
            "old_objects": tables.old_objects, "held_by": _share(tables.held_by, tables.old_objects or 0)}


def sampler(how: dict | None) -> str:
    """Who took the CPU samples, in words: async-profiler's event and interval, or JFR and why (what
    capbench/engine/profile_step.py recorded: `by`, and `event` and `interval_us` or `why`)."""
    if not how or how["by"] != "async-profiler":
        why = how["why"] if how and "why" in how else None
        return "JFR's execution sampler" + (f" ({why})" if why else "")
    return (f"async-profiler ({how['event']}, samples at least {how['interval_us']} µs of CPU time apart: one that the "
            "quota delays stands for more)")


def blocks(results: RunResults) -> list[dict]:
    """One block per label profiled, in the order profiled."""
    out = []
    for label, found in profile_record.read(results.paths.analysis("profiles")).items():
        nodes = [{"node": node, "recording": read.recording, "flame_graphs": read.flame_graphs,
                  "cpu_profiler": sampler(read.cpu_profiler),
                  "tables": node_tables(read.tables) if read.tables else None,
                  "heap": _in_mb(read.heap_holders), "heap_not_the_jdks": _in_mb(read.heap_classes_not_the_jdks)}
                 for node, read in found.nodes.items()]
        out.append({"label": label, "offered_rps": found.offered_rps, "seconds": found.seconds,
                    "unprofiled": found.unprofiled, "profiled": found.profiled, "overhead": found.overhead,
                    "problems": found.problems, "overhead_cost": profile_facts.overhead_cost(found.overhead),
                    "nodes": nodes})
    return out


def cited(found: list[Hint], profile: Profile | None) -> list[Hint]:
    """The hints, each with what its node's profile at the same label's capacity says behind it (a lock-bound
    node: the monitor waited on longest), where that node was profiled."""
    nodes = profile.nodes if profile else {}
    out = []
    for hint in found:
        tables = nodes[hint.host].tables if hint.host in nodes else None
        facts = profile_facts.cite(hint.kind, asdict(tables) if tables else None)
        out.append(replace(hint, text=f"{hint.text}. The profile at this capacity: {facts}") if facts else hint)
    return out
