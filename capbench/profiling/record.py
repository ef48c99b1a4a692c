"""profiles.json, typed: per label profiled at its capacity, its pairs of steps and their overhead, and per node
the recording's tables (capbench/profiling/JfrSummary.java), async-profiler's CPU tables in place of JFR's where it sampled
(capbench/profiling/stacks.py), the threads' time (capbench/profiling/thread_time.py) and the heap's holders. capbench/engine/profile_step.py
writes it; the report reads it back through read()."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from capbench.rundata import jsonl
from capbench.rundata.findings import from_json
from capbench.rundata.records import doc

# A table's rows: {name, count, total} (CPU and allocation: total is the samples' weight; monitors and parks: ms),
# exceptions with their stack, thread groups with their times; each table's own module says which.
Rows = list[dict]


@dataclass
class Throttling:
    """The node's CPU quota over the recording (the kernel's cgroup counters)."""
    periods: int = doc("quota periods", default=0)
    throttled_periods: int = doc("of those, the periods that used the quota up", default=0)
    throttled_ms: float = doc("time held back", default=0.0)


@dataclass
class ProfileTables:
    """One node's tables over the profiled step."""
    seconds: float | None = doc("the recording's span read", default=None)
    cpu_samples: int = doc("CPU samples (JFR's execution samples, or async-profiler's)", default=0)
    cpu_time_ms: float | None = doc("async-profiler: the CPU time the samples stood for", default=None)
    cpu_ranked: bool | None = doc("async-profiler: enough samples to rank methods", default=None)
    truncated_stacks: int | None = doc("stacks cut at the recorder's depth", default=None)
    cpu_self: Rows = doc("methods running when sampled", default_factory=list)
    cpu_total: Rows = doc("methods anywhere on the sampled stacks", default_factory=list)
    cpu_application: Rows = doc("the application's methods anywhere on them", default_factory=list)
    cpu_application_self: Rows = doc("async-profiler: the application's innermost method", default_factory=list)
    cpu_own: Rows = doc("async-profiler: the application's own code (its packages)", default_factory=list)
    monitors_ms: Rows = doc("monitors waited on, ms", default_factory=list)
    parks_ms: Rows = doc("parks, ms", default_factory=list)
    idle_parks: int | None = doc("parks of idle pool threads, left out of parks_ms", default=None)
    allocation_bytes: Rows = doc("classes allocated, by the samples' weight", default_factory=list)
    gc_pauses_ms: Rows = doc("GC pauses by cause", default_factory=list)
    exceptions: Rows = doc("exceptions thrown, with a stack", default_factory=list)
    errors: Rows = doc("errors thrown, with a stack", default_factory=list)
    throwables_created: int | None = doc("throwables created over the step", default=None)
    throttling: Throttling | None = doc("the CPU quota's throttling", default=None)
    old_objects: int | None = doc("live objects sampled", default=None)
    held_by: Rows = doc("those by what holds them", default_factory=list)
    thread_time: Rows = doc("thread groups' CPU and run-queue delay over the step", default_factory=list)
    thread_seconds: float | None = doc("the span those times are over", default=None)
    request_threads: dict | None = doc("the request threads' row of thread_time, with its span", default=None)


@dataclass
class NodeProfile:
    """One node profiled: its files and tables."""
    recording: str | None = doc("the JFR recording's file name", default=None)
    tables: ProfileTables | None = doc("what the recording and sampler gave (None: not read)", default=None)
    flame_graphs: dict[str, str] = doc("flame graph pages by kind (cpu, alloc, lock)", default_factory=dict)
    cpu_profiler: dict | None = doc("who sampled the CPU: by (async-profiler or JFR), event, interval_us, or why "
                                    "JFR", default=None)
    heap_holders: Rows = doc("classes holding the most bytes after the step", default_factory=list)
    heap_classes_not_the_jdks: Rows = doc("of those, the server's and the application's", default_factory=list)


@dataclass
class Profile:
    """A label profiled at its capacity."""
    offered_rps: float | None = doc("the rate profiled at", default=None)
    seconds: int | None = doc("each profiled step's length", default=None)
    unprofiled: dict | None = doc("the first pair's step without recording: step, passed, achieved_rps, "
                                  "answered_ok, p99_ms", default=None)
    profiled: dict | None = doc("its step with recording, the same figures", default=None)
    pairs: list[dict] = doc("every pair's two steps and their overhead", default_factory=list)
    overhead: dict | None = doc("achieved and p99 ratios, profiled over unprofiled, over the pairs",
                                default=None)
    nodes: dict[str, NodeProfile] = doc("per node profiled", default_factory=dict)
    problems: list[str] = doc("what could not be recorded or read, per node", default_factory=list)


def read(path: Path) -> dict[str, Profile]:
    """profiles.json as its records, by label; empty where the run profiled nothing."""
    return {label: from_json(Profile, found) for label, found in (jsonl.read_json(path) or {}).items()}
