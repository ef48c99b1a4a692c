"""The machine a run ran on, as its calibration tells it (run.json, summary.json and each history line carry
`calibration`: the probe, each node's ms per Grinder call at idle and CPU time of a native probe, the load
host's CPU probe, a machine id; runs from before calibration have none, which reads as unknown, never as equal):
whether two runs' machines differ beyond the probe's noise, and the capacity per calibrated core. The nodes'
machine is told by their native probe (`node_cpu_ms`), not by the Grinder's time per call, which moves with the
code each JVM compiled (capbench/engine/calibration_probe.py); runs from before that probe compare as unknown.

Capacity per calibrated core. A node's `ms_per_call` t is the time one probe call takes alone on an idle node:
one core's worth of CPU for t ms, so one core of that machine serves at most 1000 / t such calls a second.
Capacity × t / 1000 is then the capacity counted in those cores — "calibrated cores": how many of the
machine's cores the capacity would keep busy if every call cost what it costs alone. It does not change when
the same code runs on a faster or slower machine (the capacity and 1 / t move together), so it compares runs
across machines; set against the CPU quota it says what share of the quota turned into calls at their idle
cost (the rest went to contention, GC, the JVM and the OS under load). It counts cores of the probe's call:
read it as cores of the run's own work only when the probe is the run's workload."""
from __future__ import annotations

import math
import statistics

from capbench.rundata.history import HistoryLine
from capbench.rundata.run import RunRecord
from capbench.rundata.summary import Summary

# How far two calibrations of one machine may differ before they say "another machine, or one under other load":
# about twice the probes' own run-to-run spread on one machine, and far below what separates two machines
# (docs/findings.md has the measurements).
CALIBRATION_NOISE_PCT = 25.0


def of(record: RunRecord | Summary | HistoryLine | None) -> dict | None:
    """The record's calibration (run.json, summary.json or a history line), or None where it has none."""
    calibration = record.calibration if record is not None else None
    return calibration if isinstance(calibration, dict) else None


def _positive(value) -> float | None:
    return float(value) if isinstance(value, (int, float)) and math.isfinite(value) and value > 0 else None


def _nodes_median(calibration: dict | None, field: str) -> float | None:
    values = [v for v in map(_positive, ((calibration or {}).get(field) or {}).values()) if v]
    return statistics.median(values) if values else None


def node_ms(calibration: dict | None) -> float | None:
    """The median over the nodes of ms per Grinder call at idle: the price of the servlet's work."""
    return _nodes_median(calibration, "ms_per_call")


def node_cpu_ms(calibration: dict | None) -> float | None:
    """The median over the nodes of their native CPU probe: the run's one figure for the nodes' machine."""
    return _nodes_median(calibration, "node_cpu_ms")


def machine(calibration: dict | None) -> str | None:
    return (calibration or {}).get("machine") or None


def shift_pct(a: dict | None, b: dict | None, key=node_ms) -> float | None:
    """How much B's calibration (node median by default) is above A's, in %; None when either is unknown."""
    before, after = key(a), key(b)
    return 100 * (after / before - 1) if before and after else None


def differences(a: dict | None, b: dict | None, load_host: bool = True) -> list[str]:
    """What differs between the machines of two runs, as short tags; nothing where it is the same, or unknown.
    load_host=False: the nodes' machine only."""
    tags = []
    if machine(a) and machine(b) and machine(a) != machine(b):
        tags.append("different machines")
    nodes = shift_pct(a, b, key=node_cpu_ms)
    if nodes is not None and abs(nodes) > CALIBRATION_NOISE_PCT:
        tags.append(f"node CPU probe {nodes:+.1f} %")
    load = shift_pct(a, b, key=lambda c: _positive((c or {}).get("load_ms")))
    if load_host and load is not None and abs(load) > CALIBRATION_NOISE_PCT:
        tags.append(f"load host calibration {load:+.1f} %")
    return tags


def describe(calibration: dict | None) -> str:
    """One run's calibration in a few words, for the comparison's header."""
    ms, cpu = node_ms(calibration), node_cpu_ms(calibration)
    figures = ([f"{ms:.3f} ms/call"] if ms else []) + ([f"CPU probe {cpu:.0f} ms"] if cpu else [])
    if not figures:
        return "not recorded"
    return ", ".join(figures) + (f" on {machine(calibration)}" if machine(calibration) else "")


def ms_for(target: str, calibration: dict | None) -> float | None:
    """The ms per call behind a target's capacity: a node's own, else (the cluster) the nodes' median."""
    own = _positive(((calibration or {}).get("ms_per_call") or {}).get(target.split()[0]))
    return own or node_ms(calibration)


def calibrated_cores(capacity: float | None, target: str, calibration: dict | None) -> float | None:
    """Capacity × ms per call / 1000: the capacity in cores of the machine at the probe's idle cost (above)."""
    ms = ms_for(target, calibration)
    return capacity * ms / 1000 if capacity and ms else None
