"""python -m capbench.report build RUN | compare [A B] | history | baseline [RUN] [--tag TAG] — the report, run
comparison, capacity history and make gate's accepted baselines, from the results folder alone (no cluster
needed). Exit status: 0 done, 2 bad input (what was wrong is said)."""
from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

from capbench.analysis import baselines, calibration, efficiency, history
from capbench.report import build, tune_report
from capbench.report.sections import ReportSection
from capbench.rundata import jsonl
from capbench.rundata.history import HistoryLine, read_history
from capbench.rundata.layout import TunePaths, history_figure, history_path, results_dir


def run_folder(run: str) -> Path:
    """A run id (or a unique prefix of one), or a path to a run's folder."""
    if not run:
        raise build.ReportError("RUN is empty: give RUN=<run-id> (a folder under results/)")
    path = Path(run)
    if path.is_dir():
        return path
    matches = sorted(p for p in results_dir().glob(f"{run}*") if p.is_dir())
    if len(matches) != 1:
        recent = ", ".join(p.name for p in sorted(results_dir().glob("2*"))[-3:]) or "none"
        raise build.ReportError(f"RUN='{run}' matches {len(matches)} folders under {results_dir()} "
                                f"(latest runs: {recent})")
    return matches[0]


def interval_text(c: history.Change) -> str:
    if c.interval is None:
        return "-"
    low, high = (100 * (x - 1) for x in (c.interval.low, c.interval.high))
    return f"[{low:+.1f}%, {high:+.1f}%] at {100 * c.interval.confidence:.0f}%"


def print_compare(a: HistoryLine, b: HistoryLine) -> None:
    print(f"A {a.run_id} ({a.git_sha})  →  B {b.run_id} ({b.git_sha})"
          + ("" if a.config_hash == b.config_hash else "   NOTE: different configurations"))
    apart = history.hours_apart(a, b)
    print(f"calibration (nodes' medians at idle: ms per Grinder call, CPU probe): A {calibration.describe(calibration.of(a))}, "
          f"B {calibration.describe(calibration.of(b))}" + (f"; runs {apart:.1f} h apart" if apart is not None else ""))
    tags = history.caveats(a, b)
    print(f"{'target':<22}{'A /s':>9}{'n':>3}{'B /s':>10}{'n':>3}{'change':>9}  {'interval of the change':<30}verdict")
    for c in history.compare(a, b):
        change = f"{c.change_pct:+.1f}%" if c.change_pct is not None else "-"
        said = f"{c.verdict} ({c.why})" if c.why else c.verdict + (f" [{'; '.join(tags)}]" if tags else "")
        print(f"{c.target:<22}{c.a_rps or '-':>9}{c.a_repeats:>3}{c.b_rps or '-':>10}{c.b_repeats:>3}{change:>9}  "
              f"{interval_text(c):<30}{said}")
    print(f"interval: exact rank (Mann–Whitney) interval of B/A from the repeats, widened by the search precision "
          f"(A {a.precision_pct or 0:g}%, B {b.precision_pct or 0:g}%); it holds the noise between a "
          "run's repeats, not drift between runs")
    if tags:
        print(f"[...] beside a verdict: what the interval cannot account for (runs over {history.FAR_APART_H:g} h "
              f"apart, other machines, calibrations differing beyond ±{calibration.CALIBRATION_NOISE_PCT:g}%)")
    for side, line in (("A", a), ("B", b)):  # what the verdicts above do not know of each side's figures
        if line.smoke:
            print(f"{side} is a smoke run (QUICK=1, holds under 60 s): its figures were not held for a minute")
        for label, why in (line.testbed_bound or {}).items():
            print(f"{side}: {label} testbed-bound: {why}")
    if a.efficiency or b.efficiency:
        print(f"E: {a.efficiency} → {b.efficiency}")
        for side, line in (("A", a), ("B", b)):
            said = efficiency.caveat(line.efficiency)
            if said:
                print(f"   {side}: {said}")


def main(argv: list[str] | None = None,
         section_of: Callable[[Path], ReportSection | None] = lambda folder: None,
         accepted_build: Callable[[Path], dict[str, str]] | None = None) -> int:
    """section_of: the report section of the kind a run's folder holds; accepted_build: the build of an accepted
    run's folder as a duet gate runs it, ValueError when it cannot be kept (the kinds and the duet are layers
    above report/; capbench/commands/report.py passes both)."""
    parser = argparse.ArgumentParser(prog="python -m capbench.report", description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("build", help="write results/<run>/report.html").add_argument("run")
    cmp = sub.add_parser("compare", help="capacity change between two runs, with its noise band")
    cmp.add_argument("a", nargs="?")
    cmp.add_argument("b", nargs="?")
    sub.add_parser("history", help="plot capacity over the runs in results/history.jsonl")
    accept = sub.add_parser("baseline", help="accept a run (default: the last complete one) as make gate's baseline")
    accept.add_argument("run", nargs="?")
    accept.add_argument("--tag")
    args = parser.parse_args(argv)
    try:
        if args.command == "build":
            folder = run_folder(args.run)
            out = tune_report.rebuild(folder) if TunePaths(folder).tune_json.is_file() else build.build(folder, section_of(folder))
            print(f"report: {out}")
        elif args.command == "compare":
            a, b = history.pick(read_history(history_path())[0], args.a, args.b)
            print_compare(a, b)
        elif args.command == "baseline":
            accepted = baselines.mark(read_history(history_path())[0], args.run, args.tag)
            if accepted_build is not None:
                try:
                    accepted = replace(accepted, build=accepted_build(run_folder(accepted.run_id)))
                except (ValueError, build.ReportError) as problem:
                    print(f"baseline: warning: its build is not kept for a duet gate (make gate): {problem}; "
                          "GATE_MODE=history can still judge against it", file=sys.stderr)
            jsonl.append(history_path(), accepted.to_json())
            print(f"baseline: {accepted.run_id} ({accepted.git_sha}) accepted for its bench ({accepted.bench_hash})"
                  + (f" as {accepted.tag}" if accepted.tag else "") + f" in {history_path()}")
            if accepted.build:
                print("baseline: its build, as make gate runs it beside yours: "
                      + " ".join(f"{k}={v}" for k, v in accepted.build.items()))
        else:
            lines = read_history(history_path())[0]
            if not lines:
                raise history.CompareError(f"no runs in {history_path()} yet: run a bench first")
            from capbench.report import history_plot  # matplotlib only when plotting
            out = history_plot.plot(lines, history_figure())
            flags = history.machine_flags(lines)
            for i, line in enumerate(lines[-10:], start=max(0, len(lines) - 10)):
                caps = ", ".join(f"{t} {c:g}" for t, c in line.capacities.items() if c)
                print(f"{line.run_id:<44} {line.config_hash:<13} "
                      f"{calibration.describe(calibration.of(line)):<28} {caps}"
                      + (f"   [{'; '.join(flags[i])}]" if i in flags else "")
                      + (f"   [{line.status}: {'; '.join(line.lost)}]" if line.lost else ""))
            print(f"history: {out}")
    except (build.ReportError, history.CompareError, baselines.BaselineError) as problem:
        print(f"report: {problem}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
