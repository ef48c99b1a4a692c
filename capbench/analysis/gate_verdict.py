"""make gate's verdict: whether the capacity of the build just measured holds against a baseline, and whether it
meets the user's p99 thresholds, as checks a pipeline reads (one per target and per threshold) and one exit status.

A target's capacity FELL when the exact rank interval of the ratio now/baseline over the two runs' repeats
(capbench/analysis/significance.py, widened by each run's search precision) lies wholly below 1 − GATE_DROP_PCT/100: at
the interval's confidence the drop is beyond the tolerance. Otherwise it HOLDS, the interval said beside it (a
wide one holds because the noise cannot show a drop, not because there was none). It CANNOT TELL when what the
interval needs is missing: fewer than three repeats a side, a search that did not end in a capacity (invalid
steps, a node down, out of steps), a run that did not complete, another bench, or nodes whose machine or
calibration differs beyond its noise (the interval holds the noise between one run's repeats, not a change of
machine).
A p99 threshold MS@RATE is checked on steps at RATE measured after the searches (one per repeat, their median)."""
from __future__ import annotations

import re
import statistics
from dataclasses import dataclass, field

from capbench.analysis import calibration, significance
from capbench.analysis.history import FAR_APART_H, hours_apart
from capbench.rundata.history import HistoryLine
from capbench.rundata.records import StepRecord

HOLDS, FELL, CANNOT_TELL, ABOVE = "holds", "fell", "cannot tell", "above threshold"
# The exit status per verdict; the gate's is the first of these its checks reach.
EXIT = {FELL: 3, ABOVE: 5, CANNOT_TELL: 4, HOLDS: 0}
DEFAULT_BENCH = "cluster"
# GATE_BENCH: the benches that search capacities (the kinds marked gated: tests/commands/test_gate_keys.py)
BENCHES = ("single", "cluster")
# GATE_MODE: duet measures the baseline build and the candidate together (capbench/commands/gate_duet.py); history judges the
# run against an accepted baseline's history line, measured on another day's machine.
MODES = ("history", "duet")
DEFAULT_MODE = "duet"
DEFAULT_DROP_PCT = 10.0  # GATE_DROP_PCT's default (capbench/settings/bench.py declares it with this)
P99_ITEM = re.compile(r"(?:(?P<target>[^:@\s]+):)?(?P<ms>[0-9.]+)@(?P<rate>[0-9.]+)")


class GateSettingsError(ValueError):
    """One or more gate settings are wrong: each problem on a line of its own."""


@dataclass(frozen=True)
class P99Threshold:
    target: str
    ms: float
    rate: float

    @property
    def label(self) -> str:
        """The label its steps are recorded under (steps.jsonl), and the check's name."""
        return f"{self.target} p99 at {self.rate:g}/s"


@dataclass(frozen=True)
class GateSettings:
    bench: str
    baseline: str | None
    drop_pct: float
    p99: tuple[P99Threshold, ...]
    repeats: int = significance.MIN_REPEATS  # REPEATS, when the user gives none
    mode: str = DEFAULT_MODE
    rounds: int = 5  # make gate-calibrate's


def let_through(gate: Gate, environ: dict[str, str]) -> None:
    """Notes on a gate that cannot tell that GATE_CANNOT_TELL=pass lets it through a pipeline
    (examples/ci/capacity-gate.sh exits 0 then), so its outputs say so and not only the script's line."""
    if gate.verdict == CANNOT_TELL and environ.get("GATE_CANNOT_TELL") == "pass":
        gate.notes.append("GATE_CANNOT_TELL=pass: examples/ci/capacity-gate.sh lets this build through (exit 0) "
                          "though the gate cannot tell")


@dataclass
class Check:
    name: str  # "capacity node1", "node1 p99 at 400/s"
    verdict: str
    message: str  # the figures, in a sentence
    figures: dict = field(default_factory=dict)


@dataclass
class Gate:
    run_id: str
    baseline_id: str | None
    baseline_how: str
    drop_pct: float
    checks: list[Check]
    notes: list[str]  # what the verdicts cannot account for, and what the build changed

    @property
    def verdict(self) -> str:
        """The first verdict of EXIT's order that a check has: a fall outweighs a threshold, which outweighs
        not knowing."""
        found = {c.verdict for c in self.checks} or {CANNOT_TELL}
        return next(v for v in EXIT if v in found)

    @property
    def code(self) -> int:
        return EXIT[self.verdict]


def _rate(rps: float | None) -> str:
    return f"{rps:g}/s" if rps else "no capacity"


def _repeats(values: list[float]) -> str:
    return f"{len(values)} repeat{'s' * (len(values) != 1)}" + (f": {', '.join(f'{c:g}' for c in values)}" if values else "")


def _pct(ratio: float) -> str:
    return f"{100 * (ratio - 1):+.1f} %"


def capacity_check(target: str, base: HistoryLine, now: HistoryLine, now_searches: list[dict], drop_pct: float,
                   cannot: str | None) -> Check:
    """One target: `base` and `now` are history lines (capacities, repeats, precision_pct); now_searches the
    current run's searches of the target (their status); `cannot` a reason that holds for every target."""
    name = f"capacity {target}"
    b_reps = [c for c in base.repeats.get(target, []) if c]
    n_reps = [c for c in now.repeats.get(target, []) if c]
    b_cap, n_cap = base.capacities.get(target), now.capacities.get(target)
    figures = {"target": target, "baseline_rps": b_cap, "baseline_repeats": b_reps, "rps": n_cap,
               "repeats": n_reps, "tolerance_pct": drop_pct}
    said = f"{_rate(n_cap)} now ({_repeats(n_reps)})" + (f" against {b_cap:g}/s ({_repeats(b_reps)})" if b_cap else "")
    unfinished = [s for s in now_searches if s.get("status") != "found"]
    if not b_cap or (cannot and not n_reps):
        return Check(name, CANNOT_TELL, f"{said}: {cannot or f'the baseline has no capacity for {target}'}", figures)
    for side, line in (("now", now), ("the baseline", base)):
        if target in (line.testbed_bound or {}):  # the testbed's ceiling is no build's figure
            return Check(name, CANNOT_TELL, f"{said}: {side}, {line.testbed_bound[target]}", figures)
    if now_searches and not n_reps and all(s.get("status") == "none-passed" for s in now_searches):
        return Check(name, FELL, f"{said}: no rate down to the lowest met the SLO "
                                 f"({now_searches[-1].get('reason')})", figures)
    if unfinished:
        why = "; ".join(f"repeat {s.get('repeat')}: {s.get('status')} ({s.get('reason')})" for s in unfinished)
        return Check(name, CANNOT_TELL, f"{said}: a search did not end in a capacity: {why}", figures)
    try:
        interval = significance.ratio_interval(b_reps, n_reps, base.precision_pct or 0.0, now.precision_pct or 0.0)
    except significance.TooFewRepeats as problem:
        return Check(name, CANNOT_TELL, f"{said}: {problem}", figures)
    figures.update(change_pct=round(100 * (interval.ratio - 1), 1), interval_pct=[
        round(100 * (interval.low - 1), 1), round(100 * (interval.high - 1), 1)], confidence=interval.confidence)
    said += (f", {_pct(interval.ratio)}; the change lies in [{_pct(interval.low)}, {_pct(interval.high)}] at "
             f"{100 * interval.confidence:.0f} % confidence")
    if cannot:
        return Check(name, CANNOT_TELL, f"{said}; but {cannot}", figures)
    if interval.high < 1 - drop_pct / 100:
        return Check(name, FELL, f"{said}: wholly below the tolerance of -{drop_pct:g} %", figures)
    return Check(name, HOLDS, f"{said}: not wholly below the tolerance of -{drop_pct:g} %", figures)


def p99_check(threshold: P99Threshold, steps: list[StepRecord]) -> Check:
    """The threshold against the p99 of its steps (label P99Threshold.label): the median over the valid ones."""
    own = [s for s in steps if s.label == threshold.label]
    valid = [s for s in own if s.valid and s.result.latency_ms.get("p99") is not None]
    p99s = [s.result.latency_ms["p99"] for s in valid]
    figures = {"target": threshold.target, "rate": threshold.rate, "threshold_ms": threshold.ms, "p99_ms": p99s,
               "achieved_rps": [s.result.achieved_rps for s in own]}
    if not own or len(valid) < len(own):
        bad = [f"step {s.step}: {s.invalid_reason or 'no latency'}" for s in own if s not in valid]
        return Check(threshold.label, CANNOT_TELL, ("; ".join(bad) if bad else "no step was measured")
                     + f" (threshold {threshold.ms:g} ms)", figures)
    median = statistics.median(p99s)
    figures["median_p99_ms"] = median
    said = (f"p99 {median:.1f} ms (median of {len(p99s)} steps: {', '.join(f'{p:.1f}' for p in p99s)} ms), "
            f"threshold {threshold.ms:g} ms")
    return Check(threshold.label, HOLDS if median <= threshold.ms else ABOVE, said, figures)


def build_changes(base: HistoryLine, now: HistoryLine) -> list[str]:
    """The build settings that differ between the baseline's history line and the current one."""
    b, n = base.build, now.build
    return [f"{k} {b.get(k, '-')} → {n.get(k, '-')}" for k in sorted({*b, *n}) if b.get(k) != n.get(k)]


def judge(now: HistoryLine, searches: dict[str, list[dict]], steps: list[StepRecord], base: HistoryLine | None,
          baseline_how: str, settings: GateSettings) -> Gate:
    """The gate for the run whose history line is `now` (searches: its summary's per target; steps: its
    steps.jsonl) against the baseline's history line `base` (None: none found, `baseline_how` says why)."""
    notes, cannot = [], None
    if base is None:
        cannot = baseline_how
    elif now.status != "complete":
        cannot = f"the run is {now.status}, not complete" + (f" ({'; '.join(now.lost)})" if now.lost else "")
    elif base.bench_hash != now.bench_hash:
        cannot = (f"the baseline {base.run_id} measured another bench (bench_hash {base.bench_hash} "
                  f"against {now.bench_hash}: the kind, workload, SLO, driver, profile or backend differ)")
    else:
        # The nodes' machine decides what a capacity is worth; a load host that got slower is judged step by step
        # (a step it could not hold is invalid, and its search cannot tell), so its calibration is only noted.
        machine = calibration.differences(calibration.of(base), calibration.of(now), load_host=False)
        if machine:
            cannot = f"the machine differs from the baseline's ({', '.join(machine)})"
        notes += [f"{tag} since the baseline" for tag in calibration.differences(calibration.of(base),
                  calibration.of(now)) if tag not in machine]
    if base is not None:
        changed = build_changes(base, now)
        if changed:
            notes.append("build settings changed since the baseline: " + ", ".join(changed))
        if base.git_sha != now.git_sha:
            notes.append(f"code {base.git_sha} → {now.git_sha}")
        apart = hours_apart(base, now)
        if apart is not None and apart > FAR_APART_H:
            notes.append(f"{apart:.0f} h since the baseline: the interval holds the noise between one run's repeats, "
                         "not the machine's drift over days")
    targets = list(now.capacities or searches)
    checks = [capacity_check(t, base or HistoryLine(), now, searches.get(t, []), settings.drop_pct, cannot)
              for t in targets]
    checks += [p99_check(threshold, steps) for threshold in settings.p99]
    return Gate(now.run_id, base.run_id if base else None, baseline_how, settings.drop_pct, checks, notes)
