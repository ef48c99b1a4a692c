"""results/history.jsonl, typed: a line per run that ended (HistoryLine, capbench/analysis/history.py makes it) and make
baseline's marks among them (BaselineMark, capbench/analysis/baselines.py). Every field has a default: lines written
before a field existed read it as unknown."""
from __future__ import annotations

from dataclasses import asdict, dataclass
from pathlib import Path

from capbench.rundata import jsonl
from capbench.rundata.records import doc, known

HISTORY_SCHEMA = "capbench-history/1"
BASELINE_EVENT = "baseline"  # a mark line's `event`


# The figures of a USL fit a history line keeps.
USL_FIGURES = ("sigma", "kappa", "lam", "peak_n", "r_squared")


def usl_figures(fit: dict) -> dict | None:
    """A USL fit's USL_FIGURES (the fit as capbench/analysis/usl_fit.py writes it), None without a fit."""
    if not fit or "error" in fit:
        return None
    return {k: fit.get(k) for k in USL_FIGURES}  # as UslFit.as_dict wrote it

@dataclass
class HistoryLine:
    """A run that ended, as make compare, make history and make gate read it."""
    time: str | None = doc("when the line was written (TIME_FORMAT, UTC)", default=None)
    run_id: str = doc("the run", default="")
    kind: str | None = doc("its bench kind", default=None)
    status: str | None = doc("complete, degraded (a machine or host lost on the way), partial or failed",
                             default=None)
    git_sha: str | None = doc("the checkout's commit", default=None)
    backend: str | None = doc("where the cluster ran", default=None)
    config_hash: str = doc("what makes two runs comparable (capbench/analysis/history.py)", default="")
    bench_hash: str | None = doc("config_hash without the build under test (make gate)", default=None)
    build: dict[str, str] = doc("the build's settings by name (make gate)", default_factory=dict)
    driver: dict | None = doc("the load generator's name and version", default=None)
    workload: str | None = doc("the workload, described", default=None)
    precision_pct: float | None = doc("the search's precision", default=None)
    capacities: dict[str, float | None] = doc("per search label, the capacity", default_factory=dict)
    repeats: dict[str, list[float]] = doc("per search label, each repeat's capacity", default_factory=dict)
    cluster_rps: float | None = doc("bench-cluster's X_cluster", default=None)
    efficiency: float | None = doc("bench-cluster's E", default=None)
    cluster_over_node1: float | None = doc("bench-cluster's X_cluster / X_node1", default=None)
    usl: dict | None = doc(f"{', '.join(USL_FIGURES)} of bench-usl's fit, or bench-scaleout's over N",
                           default=None)
    scaleout: dict[str, float] | None = doc("bench-scaleout's E(N) by N", default=None)
    calibration: dict | None = doc("the run's calibration (None: a run from before calibration)", default=None)
    degraded: dict[str, str] | None = doc("per search label that degraded during its search, its cause "
                                          "(capbench/analysis/state_drift.py)", default=None)
    smoke: bool = doc("a smoke run (QUICK=1, holds under 60 s): never a baseline", default=False)
    testbed_bound: dict[str, str] | None = doc("per search label whose capacity is the testbed's ceiling, not the "
                                               "application's, why (capbench/analysis/testbed_ceiling.py)", default=None)
    held_short: dict[str, str] | None = doc("per search label a repeat of which was held for less than HOLD_S, how "
                                            "long", default=None)
    lost: list[str] | None = doc("what the run lost, each in words: \"node2's machine lab3 was lost at 14:02:11\" "
                                 "(capbench/rundata/events.py)", default=None)

    def to_json(self) -> dict:
        return {"schema": HISTORY_SCHEMA, **asdict(self)}

    @classmethod
    def from_json(cls, data: dict) -> HistoryLine:
        return cls(**known(cls, data))


@dataclass
class BaselineMark:
    """make baseline's line: it accepts a run as the gate's baseline for its bench."""
    run_id: str = doc("the run accepted")
    tag: str | None = doc("the name it was accepted under")
    time: str = doc("when it was accepted")
    bench_hash: str = doc("the bench it is the baseline of")
    git_sha: str | None = doc("the run's commit")
    build: dict[str, str] = doc("the build accepted, as a duet gate runs it: its words (capbench/duet/builds.py), the WAR "
                                "kept under results/builds/; {} where it could not be kept", default_factory=dict)

    def to_json(self) -> dict:
        return {"schema": HISTORY_SCHEMA, "event": BASELINE_EVENT, **asdict(self)}

    @classmethod
    def from_json(cls, data: dict) -> BaselineMark:
        return cls(**known(cls, data))


def read_history(path: Path) -> tuple[list[HistoryLine], list[BaselineMark]]:
    """The history's run lines and its baseline marks, each in the order written."""
    lines = jsonl.read(path)
    return ([HistoryLine.from_json(line) for line in lines if line.get("event") != BASELINE_EVENT],
            [BaselineMark.from_json(line) for line in lines if line.get("event") == BASELINE_EVENT])
