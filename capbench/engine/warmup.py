"""Warm-up before a search, until the target is steady: windows of WARMUP_S at one rate, repeated until two in a
row agree on the server's mean time per request (within AGREE_PCT: the JIT compiler done with the hot code,
the heap sized for the allocation rate), at most MAX_WINDOWS. A cold JVM on a small CPU quota spends its quota
compiling: a search started before that measures the compiler (the same node measured 137.5/s on a fresh
cluster and 175/s minutes later). Before a run's first search every node is warmed together, so the order in
which the nodes are then searched alone does not decide which looks faster. Each warm-up is recorded
(summary.json's `warmups`): its rate, windows, the figure of each and whether it became steady. A QUICK run
(a smoke run) warms each target with one window after that, not judged. The rates come
from the last complete run of the same workload in the history where there is one: a warm-up near the
expected capacity sizes the heap and the pools for it, where a few requests a second only compile the code."""
from __future__ import annotations

from capbench.engine.progress import say
from capbench.hosts import topology
from capbench.load.scenario import workload_name
from capbench.rundata import jsonl
from capbench.rundata.layout import history_path

# Two windows agree within this share, or this many ms (at a low rate a single stall moves the mean by more): a
# JVM still compiling takes several times its warm time per request (9 ms against 2 ms for v1 at level 13).
AGREE_PCT = 20.0
AGREE_MS = 1.0
MAX_WINDOWS = 6


def steady_figure(record) -> float | None:
    """The server's mean time per request over a window (oha's send-to-answer), else the corrected p50."""
    result = record.result
    return result.mean_service_ms if result.mean_service_ms is not None else result.latency_ms.get("p50")


def agree(a: float | None, b: float | None) -> bool:
    if a is None or b is None:
        return False
    return abs(a - b) <= AGREE_MS or abs(a - b) / max(a, b) * 100 <= AGREE_PCT


def expected_rps(settings, label: str) -> float | None:
    """The label's capacity in the last complete run of this workload (results/history.jsonl), if any."""
    workload = workload_name(settings)
    found = [line["capacities"][label] for line in jsonl.read(history_path()) if line.get("status") == "complete"
             and line.get("workload") == workload and (line.get("capacities") or {}).get(label)]
    return found[-1] if found else None


def warm_up(steps, target: str, rate: float, label: str, max_windows: int = MAX_WINDOWS) -> dict:
    """Warm-up windows on `target` (already in rotation) at `rate` until steady, at most `max_windows` (one:
    a single window, not judged), with the run's steps (capbench/engine/measuring.py) under `label`; the outcome is recorded
    in the steps' warmups."""
    duration = max(steps.settings.warmup_s, steps.driver.min_step_s)
    figures: list[float | None] = []
    steady = False
    while len(figures) < max_windows and not steady:
        record = steps.measure(target, 0, rate, "warmup", label=label, duration_s=duration)
        figures.append(steady_figure(record))
        steady = len(figures) >= 2 and agree(figures[-2], figures[-1])
    outcome = {"label": label, "target": target, "rate_rps": rate, "window_s": duration,
               "windows": len(figures), "service_ms": figures, "steady": steady if max_windows > 1 else None}
    steps.warmups.append(outcome)
    if not steady and max_windows > 1:
        say(f"warning: {target} was not steady after {len(figures)} warm-up windows of {duration} s at {rate:g}/s "
            f"(mean ms per request {', '.join(str(f) for f in figures)}); the search starts anyway")
    return outcome


def run_warm_rate(settings) -> float:
    """Every node together, at half the cluster's last capacity for this workload, or at START_RATE per node."""
    expected = expected_rps(settings, "cluster")
    return round(expected / 2, 1) if expected else settings.start_rate * len(topology.NODES)
