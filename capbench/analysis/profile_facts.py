"""What a node's profile at capacity says, as phrases the console, the report and the bottleneck hints cite: the
hottest method and the application's, the monitor and the class parked on that were waited on longest, the class
allocated most, what holds the live objects sampled. The tables are capbench/profiling/JfrSummary.java's (rows of name,
count, total, largest, by total)."""
from __future__ import annotations

from capbench.profiling.stacks import MIN_TO_RANK
from capbench.profiling.thread_time import STARVED_SHARE

OVERHEAD_SAID_PCT = 3.0  # a profile that cost more of the throughput says so


def overhead_cost(overhead: dict | None) -> str | None:
    """What a profile that cost more than OVERHEAD_SAID_PCT of the throughput means for its tables, or None."""
    ratio = (overhead or {}).get("achieved_ratio")
    if ratio is None or (1 - ratio) * 100 <= OVERHEAD_SAID_PCT:
        return None
    return f"the profile cost {(1 - ratio) * 100:.0f} % of the throughput, so its tables describe a server slowed by it"


def ranked(tables: dict) -> bool:
    """Enough CPU samples that a row's share means something (capbench/profiling/stacks.py's MIN_TO_RANK)."""
    return (tables.get("cpu_samples") or 0) >= MIN_TO_RANK


def _of_whole(tables: dict) -> tuple[float, str]:
    """What the CPU rows' totals are shares of, and how to say it: the CPU time the samples stood for where the
    sampler gave it (async-profiler), else the samples."""
    samples = tables.get("cpu_samples") or 0
    if tables.get("cpu_time_ms"):
        return tables["cpu_time_ms"], f"{tables['cpu_time_ms'] / 1000:.1f} s of CPU time ({samples} samples)"
    return samples, f"{samples} CPU samples"


def hottest(tables: dict) -> str | None:
    samples, rows = tables.get("cpu_samples") or 0, tables.get("cpu_self") or []
    if not samples or not rows:
        return None
    if not ranked(tables):
        return f"too few CPU samples to rank ({samples}, fewer than {MIN_TO_RANK}: a longer JFR_STEP_S gives more)"
    whole, said = _of_whole(tables)
    return f"{100 * rows[0]['total'] / whole:.0f} % of {said} in {rows[0]['name']}"


def hottest_application(tables: dict) -> str | None:
    """The application's method with the most samples: its innermost on each stack where the sampler gave stacks
    whole (async-profiler), else anywhere on the stack (JFR's table)."""
    samples = tables.get("cpu_samples") or 0
    innermost = tables.get("cpu_application_self") or []
    rows = innermost or tables.get("cpu_application") or []
    if not samples or not rows or not ranked(tables):
        return None
    where = "in" if innermost else "under"
    return f"the application's: {100 * rows[0]['total'] / _of_whole(tables)[0]:.0f} % {where} {rows[0]['name']}"


def hottest_own(tables: dict) -> str | None:
    """The service's own method (its own classes', not its framework's) with the most samples on its stacks."""
    rows = tables.get("cpu_own") or []
    if not rows or not ranked(tables):
        return None
    return f"its own code: {100 * rows[0]['total'] / _of_whole(tables)[0]:.0f} % under {rows[0]['name']}"


def _longest(tables: dict, key: str, what: str) -> str | None:
    rows = tables.get(key) or []
    if not rows:
        return None
    where = f", in {rows[0]['stack'][0]}" if rows[0].get("stack") else ""  # a park's class alone is the JDK's
    return (f"{rows[0]['total'] / 1000:.1f} s {what} {rows[0]['name']} ({rows[0]['count']} waits of 10 ms or "
            f"more{where})")


def longest_monitor(tables: dict) -> str | None:
    return _longest(tables, "monitors_ms", "blocked on the monitor of")


def request_thread_time(tables: dict) -> str | None:
    """Where the request threads' wall-clock time went, by the kernel's accounting (capbench/profiling/thread_time.py)."""
    t = tables.get("request_threads")
    if not t or t.get("run_delay_share") is None:
        return None
    return (f"{t['threads']} request threads over {t['seconds']:.1f} s: {t['cpu_s']:.1f} s on a CPU, "
            f"{t['run_delay_s']:.1f} s runnable and waiting for one ({100 * t['run_delay_share']:.0f} % of the time "
            f"they could run), {t['off_cpu_s']:.0f} s blocked, parked or idle")


def starved_monitor(tables: dict) -> str | None:
    """The monitor waited on longest on a node at its CPU quota, and whether its waits are the quota's or the
    lock's: a thread holding a monitor runs or is runnable, so where runnable request threads waited for a CPU
    longer than they ran on one (thread_time.STARVED_SHARE: the kernel's run delay), the holder was descheduled for
    most of the time it held it. Without the kernel's figures: a holder may be, so the waits are starvation as
    much as contention."""
    longest = longest_monitor(tables)
    if not longest:
        return None
    request = tables.get("request_threads") or {}
    share = request.get("run_delay_share")
    if share is None:
        return (f"{longest}, while the quota was used up: a holder descheduled until the next period keeps the "
                "others waiting, so these waits are CPU starvation as much as contention")
    runnable = (f"runnable request threads waited for a CPU {100 * share:.0f} % of the time they could run "
                f"({request['run_delay_s']:.1f} s against {request['cpu_s']:.1f} s on one)")
    if share >= STARVED_SHARE:
        return (f"{longest}, CPU-starved rather than lock-bound: the quota was used up and {runnable}, so the "
                "monitor's holder was descheduled for most of the time it held it")
    return (f"{longest}, the lock's own: the quota was used up, yet {runnable}, so the holder mostly ran while it "
            "held the monitor")


def longest_park(tables: dict) -> str | None:
    return _longest(tables, "parks_ms", "parked on")


def top_allocation(tables: dict) -> str | None:
    rows = tables.get("allocation_bytes") or []
    whole = sum(r["total"] for r in rows)
    if not whole:
        return None
    return f"{100 * rows[0]['total'] / whole:.0f} % of the sampled allocation charged to {rows[0]['name']}"


def top_holder(tables: dict) -> str | None:
    rows, sampled = tables.get("held_by") or [], tables.get("old_objects") or 0
    if not rows or not sampled or rows[0]["name"].startswith("("):  # "(no path to a GC root)" names nobody
        return None
    return f"{rows[0]['count']} of {sampled} live objects sampled held by {rows[0]['name']}"


def headline(tables: dict) -> str:
    """Everything above that the recording holds, in one line."""
    found = [f(tables) for f in (hottest, hottest_application, hottest_own, longest_monitor, longest_park,
                                 request_thread_time, top_allocation, top_holder)]
    return "; ".join(p for p in found if p) or "nothing recorded"


# Which facts a bottleneck hint (capbench/analysis/hints.py's kinds) cites from the node's profile.
CITED = {"cpu": (hottest, hottest_application, hottest_own),
         "throttled": (hottest, hottest_application, hottest_own, starved_monitor),
         "lock": (longest_monitor, longest_park, request_thread_time), "pool": (longest_park,),
         "gc": (top_allocation, top_holder)}


def cite(kind: str, tables: dict | None) -> str | None:
    """The profile's facts behind a hint of this kind on this node, or None."""
    found = [f(tables) for f in CITED.get(kind, ())] if tables else []
    return "; ".join(p for p in found if p) or None
