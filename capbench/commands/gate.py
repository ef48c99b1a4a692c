"""python -m capbench.commands.gate (make gate): measure the build as it is now with a bench that searches capacities
(GATE_BENCH, default cluster; GATE_REPEATS=3 repeats unless REPEATS is given; capbench/settings/bench.py), measure the p99
thresholds (GATE_P99_MS), and judge it against the baseline (capbench/analysis/gate_verdict.py, capbench/analysis/baselines.py).
GATE_MODE=duet (and --aa, make gate-aa) measures the baseline build and the candidate together instead
(capbench/commands/gate_duet.py). Writes
results/<run>/gate/ (capbench/report/pipeline.py: JUnit, JSON, OpenMetrics, Prometheus text) and a copy in results/gate/.
Every setting, and a BASELINE named, is checked before anything starts.

Exit status: 0 holds, 3 capacity fell beyond GATE_DROP_PCT, 5 a p99 threshold broken, 4 cannot tell, 2 bad
settings or cluster not up, 130 interrupted."""
from __future__ import annotations

import argparse
import os
import sys
from typing import Callable

from capbench.analysis import baselines, calibration, gate_verdict
from capbench.analysis.history import history_line
from capbench.commands import bench as bench_command, gate_calibration, gate_duet as duet_gate
from capbench.engine.progress import say
from capbench.engine.session import refuse
from capbench.hosts.cluster_settings import SettingsRefused
from capbench.kinds import KINDS
from capbench.rundata import jsonl
from capbench.rundata.history import read_history
from capbench.rundata.layout import GatePaths, gate_latest_dir, history_path
from capbench.rundata.records import read_steps
from capbench.rundata.run import RunRecord
from capbench.rundata.summary import Summary
from capbench.settings.bench import SettingsError, gate_settings, raw_settings

INTERRUPTED = 130


def measure_thresholds(bench, thresholds: tuple[gate_verdict.P99Threshold, ...]) -> None:
    """Each threshold's rate on its target, one step per repeat, recorded under the threshold's label."""
    for threshold in thresholds:
        bench.route(threshold.target)
        for repeat in range(1, bench.settings.repeats + 1):
            bench.steps.measure(threshold.target, repeat, threshold.rate, "gate", label=threshold.label)


def print_gate(result: gate_verdict.Gate, folder: GatePaths) -> None:
    print(f"\ngate: {result.run_id} against " + (f"baseline {result.baseline_id} ({result.baseline_how})"
                                                 if result.baseline_id else "no baseline"))
    for check in result.checks:
        print(f"  {check.verdict.upper():<16}{check.name:<24}{check.message}")
    for note in result.notes:
        print(f"  note: {note}")
    failing = [c.name for c in result.checks if c.verdict == result.verdict] if result.code else []
    print(f"gate: {result.verdict.upper()} (exit {result.code})" + (f": {', '.join(failing)}" if failing else ""))
    print(f"gate: {', '.join(p.name for p in folder.files)} in {folder.root}, copied to {gate_latest_dir().root}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m capbench.commands.gate", description=__doc__.split("\n\n")[0])
    parser.add_argument("--check-only", action="store_true", help="check the settings and the baseline, run nothing")
    parser.add_argument("--aa", action="store_true", help="an A/A duet: DUET_A against itself (make gate-aa)")
    parser.add_argument("--calibrate", action="store_true",
                        help="A/A duets and duets of known 5 %% drops: what a duet gate can call (make gate-calibrate)")
    args = parser.parse_args(argv)
    ready = prepared(args.aa, args.calibrate)
    return ready if isinstance(ready, int) else ready(args.check_only)


def prepared(aa: bool, calibrate: bool) -> int | Callable[[bool], int]:
    """The gate checked once: a refusal's exit status, or what runs it (check_only: its check alone), sharing what
    was checked, so that the command's check pass and its run read the settings once."""
    benches = {kind.name: kind.targets for kind in KINDS.values() if kind.needs.gated}
    try:
        chosen = gate_settings(raw_settings(), benches)
        if calibrate:
            return gate_calibration.prepared(chosen, dict(os.environ))
        if chosen.mode == "duet" or aa:
            return duet_gate.prepared(chosen, dict(os.environ), aa)
        environ = {"REPEATS": str(chosen.repeats), **os.environ}  # the gate's own default, checked with the rest
        kind = KINDS[chosen.bench]
        settings, driver, wrk2_local = bench_command.checked(kind.needs.closed_loop, environ, kind)
        if chosen.baseline:  # a baseline named must exist before minutes are spent measuring
            baselines.find(*read_history(history_path()), chosen.baseline, "", None)
    except (gate_verdict.GateSettingsError, SettingsError, SettingsRefused, baselines.BaselineError) as problem:
        return refuse(problem)
    return lambda check_only: run(kind, settings, driver, wrk2_local, chosen, check_only)


def run(kind, settings, driver, wrk2_local, chosen, check_only: bool) -> int:
    code, paths = bench_command.run(kind, settings, driver, wrk2_local, "make gate", check_only,
                                    after=lambda bench: measure_thresholds(bench, chosen.p99))
    if paths is None or code == INTERRUPTED:
        return code
    written = jsonl.read_json(paths.summary) or {}
    summary = Summary.from_json(written)
    now = history_line(RunRecord.read(paths.run_json), summary, kind.shows.history(kind.found_in(written)))
    try:
        found = baselines.find(*read_history(history_path()), chosen.baseline, now.bench_hash,
                               calibration.machine(calibration.of(now)))
    except baselines.BaselineError as problem:  # a run id's prefix that now matches this run too
        found = baselines.Found(None, str(problem))
    searches = {label: target.searches for label, target in summary.targets.items()}
    steps = read_steps(paths.steps)
    result = gate_verdict.judge(now, searches, steps, found.line, found.how, chosen)
    gate_verdict.let_through(result, dict(os.environ))
    from capbench.report import pipeline  # its libraries only once there is a verdict to write
    pipeline.write(result, kind.name, summary, steps, paths.gate, gate_latest_dir(), now.efficiency)
    print_gate(result, paths.gate)
    if result.baseline_id is None:
        say(f"accept this run as the baseline with: make baseline RUN={result.run_id}")
    return result.code


if __name__ == "__main__":
    sys.exit(main())
