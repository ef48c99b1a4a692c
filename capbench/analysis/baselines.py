"""The accepted baselines of make gate, kept in results/history.jsonl beside the runs: `make baseline` appends a
mark line ({"event": "baseline", "run_id", "tag", "time", …}) and never rewrites a run's line, so the history
stays append-only and whoever has the results folder has the baselines. A mark has no status and no capacities:
the readers of runs pass it over (capbench/rundata/history.py's read_history keeps the two apart).

The gate's baseline is, in this order of asking: a tag given to `make baseline TAG=`, a run named by its id (or
a unique prefix), or, by default, the last accepted run of the same bench (capbench/analysis/history.py's bench_hash: the
configuration without the build under test), preferring one from the same machine (its calibration's id)."""
from __future__ import annotations

import re
import time
from dataclasses import dataclass

from capbench.analysis import calibration, history, significance
from capbench.rundata.history import BaselineMark, HistoryLine

TAG = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")


class BaselineError(ValueError):
    """The baseline asked for is not in the history, or the run cannot be accepted as one."""


def _find_run(runs: list[HistoryLine], run_id: str) -> HistoryLine:
    try:
        return history.find_run(runs, run_id)
    except history.CompareError as problem:
        raise BaselineError(str(problem)) from None


def mark(runs: list[HistoryLine], run_id: str | None, tag: str | None) -> BaselineMark:
    """The mark that accepts a run (by default the last complete run with capacities) as the baseline of its
    bench; BaselineError when the run cannot serve as one (incomplete, no capacity, too few repeats)."""
    if tag is not None and not TAG.fullmatch(tag):
        raise BaselineError(f"TAG='{tag}' is not allowed: 1 to 64 letters, digits, '.', '_' or '-', starting with "
                            "a letter or digit")
    if run_id:
        line = _find_run(runs, run_id)
    else:
        done = history.complete_runs(runs)
        if not done:
            raise BaselineError("no complete run with capacities in the history: run make gate (or a bench with "
                                f"REPEATS={significance.MIN_REPEATS}) first")
        line = done[-1]
    problems = []
    if line.status != "complete":
        problems.append(f"it is {line.status}, not complete")
    if line.smoke:
        problems.append("it is a smoke run (QUICK=1 with holds under 60 s: its figures were not held for a minute)")
    for label, why in (line.testbed_bound or {}).items():
        problems.append(f"{label}'s capacity is the testbed's, not the build's ({why})")
    for label, why in (line.held_short or {}).items():
        problems.append(f"{label}'s capacity was not held for its whole hold ({why})")
    few = {t: len(r) for t, r in line.repeats.items() if len(r) < significance.MIN_REPEATS}
    if not any(line.capacities.values()):
        problems.append("it found no capacity")
    elif few:
        problems.append("too few repeats to judge noise by (" + ", ".join(f"{t} {n}" for t, n in few.items())
                        + f"; a baseline needs {significance.MIN_REPEATS} a target: REPEATS={significance.MIN_REPEATS})")
    if not line.bench_hash:
        problems.append("it was recorded before the gate existed (its history line has no bench_hash)")
    if problems:
        raise BaselineError(f"run {line.run_id} cannot be a baseline: {'; '.join(problems)}")
    return BaselineMark(line.run_id, tag, time.strftime(history.TIME_FORMAT, time.gmtime()), line.bench_hash,
                        line.git_sha)


@dataclass(frozen=True)
class Found:
    line: HistoryLine | None  # the baseline's run line, None when there is none
    how: str  # how it was chosen, or why there is none


def find(runs: list[HistoryLine], marks: list[BaselineMark], wanted: str | None, bench_hash: str,
         machine: str | None) -> Found:
    """The baseline for a run of `bench_hash` on `machine`: `wanted` as a tag, else as a run id (BaselineError
    when it is neither); by default the last accepted run of the same bench, from the same machine if any."""
    by_id = {line.run_id: line for line in runs}
    marks = [m for m in marks if m.run_id in by_id]
    if wanted:
        tagged = [m for m in marks if m.tag == wanted]
        if tagged:
            return Found(by_id[tagged[-1].run_id], f"tag {wanted}, accepted {tagged[-1].time}")
        try:
            return Found(_find_run(runs, wanted), "named")
        except BaselineError as problem:
            tags = sorted({m.tag for m in marks if m.tag})
            raise BaselineError(f"BASELINE='{wanted}' is neither a baseline tag (tags: {', '.join(tags) or 'none'}) "
                                f"nor a run: {problem}") from None
    same = [m for m in marks if m.bench_hash == bench_hash]
    here = [m for m in same if machine and calibration.machine(calibration.of(by_id[m.run_id])) == machine]
    chosen = (here or same or [None])[-1]
    if chosen is None:
        return Found(None, "no run of this bench has been accepted as a baseline (make baseline RUN=<run> accepts "
                           "one; with no RUN, the last complete run)")
    return Found(by_id[chosen.run_id], f"last accepted of this bench{' on this machine' if here else ''}, "
                                       f"accepted {chosen.time}" + (f" as {chosen.tag}" if chosen.tag else ""))
