"""The results folder: this module alone names its paths. results/<run-id>/ holds run.json (settings, versions,
git sha), steps.jsonl (one line per step, written as it completes), summary.json, the tools' raw output under
raw/, each step's latency histograms under latency/ (HdrHistogram logs), PCP's archives under pcp/, and PARTIAL
while a run has not ended normally; results/history.jsonl has one line per run; a make tune run's folder
(TunePaths) holds its points' runs, and a gate's outputs (GatePaths) are in its run's gate/ and, the latest, in
results/gate/. Every other module asks here for a path of these; what a folder handed on holds inside (PCP's
exports) is named by the module that writes it there. RESULTS_DIR moves the whole
folder (the tests do)."""
from __future__ import annotations

import os
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

from capbench.checkout import ROOT


@dataclass(frozen=True)
class RunPaths:
    root: Path

    @property
    def run_json(self) -> Path:
        return self.root / "run.json"

    @property
    def steps(self) -> Path:
        return self.root / "steps.jsonl"

    @property
    def summary(self) -> Path:
        return self.root / "summary.json"

    @property
    def partial_marker(self) -> Path:
        return self.root / "PARTIAL"

    @property
    def users(self) -> Path:
        return self.root / "users.txt"

    @property
    def raw(self) -> Path:
        """The tools' own output and other evidence (thread dumps, HAProxy's request log); made on demand."""
        self.root.joinpath("raw").mkdir(exist_ok=True)
        return self.root / "raw"

    @property
    def pcp(self) -> Path:
        return self.root / "pcp"

    @property
    def pcp_export(self) -> Path:
        return self.root / "pcp-export"

    @property
    def figures(self) -> Path:
        return self.root / "figures"

    def figure(self, name: str) -> Path:
        """A figure of the report, figures/NAME.png; the folder made on demand."""
        self.figures.mkdir(exist_ok=True)
        return self.figures / f"{name}.png"

    def raw_step_file(self, step: int, name: str, host: str | None = None) -> Path:
        """A file a step's tool left (its output, its envelope), with several load hosts one per host."""
        return self.raw / f"step-{step:03d}-{host + '-' if host else ''}{name}"

    def thread_dump(self, step: int, node: str, number: int) -> Path:
        return self.raw / f"step-{step:03d}-{node}-threaddump-{number}.txt"

    def profile_file(self, stem: str, suffix: str) -> Path:
        """One of a profiled step's files, stem (step-NNN-NODE) and suffix: its recording (.jfr), its stacks
        (-cpu.collapsed), flame graphs (-KIND.html), thread times (-threads.txt), heap histogram
        (-histogram.txt)."""
        return self.profiles / f"{stem}{suffix}"

    @property
    def gate(self) -> "GatePaths":
        return GatePaths(self.root / "gate")

    @property
    def report(self) -> Path:
        return self.root / "report.html"

    @property
    def profiles(self) -> Path:
        """Each profiled step's recordings (.jfr), flame graphs and heap histograms (capbench/engine/profile_step.py); made on
        demand."""
        self.root.joinpath("profiles").mkdir(exist_ok=True)
        return self.root / "profiles"

    def hlog(self, step: int, host: str | None = None) -> Path:
        """A step's latency as an HdrHistogram interval log (capbench/rundata/hlog.py): the step's, or one load host's part
        of it."""
        return self.root / "latency" / f"step-{step:03d}{'-' + host if host else ''}.hlog"

    @property
    def ceiling_check(self) -> RunPaths:
        """The testbed ceiling's direct check, when this run made it (capbench/engine/ceiling_probe.py): its steps and raw
        files in a folder of their own, apart from the run's steps.jsonl; made on demand."""
        self.root.joinpath("ceiling-check").mkdir(exist_ok=True)
        return RunPaths(self.root / "ceiling-check")

    def analysis(self, name: str) -> Path:
        """A bench kind's whole analysis beside the summary (failover.json, stress.json)."""
        return self.root / f"{name}.json"


@dataclass(frozen=True)
class GatePaths:
    """make gate's outputs: in its run's gate/ folder, and a copy of the latest gate's in results/gate/."""
    root: Path

    @property
    def junit(self) -> Path:
        return self.root / "junit.xml"

    @property
    def gate_json(self) -> Path:
        return self.root / "gate.json"

    @property
    def openmetrics(self) -> Path:
        return self.root / "metrics.om"

    @property
    def prometheus(self) -> Path:
        return self.root / "metrics.prom"

    @property
    def files(self) -> tuple[Path, ...]:
        return self.junit, self.gate_json, self.openmetrics, self.prometheus


@dataclass(frozen=True)
class TunePaths:
    """A make tune run's folder: tune.json (the sweep, its rounds' orders, the rows and analysis), each point's
    run of each round under points/NN-slug/round-R/, tune.html and its figure."""
    root: Path

    @property
    def tune_json(self) -> Path:
        return self.root / "tune.json"

    @property
    def page(self) -> Path:
        return self.root / "tune.html"

    @property
    def figure(self) -> Path:
        return RunPaths(self.root).figure("tune")

    @property
    def points(self) -> Path:
        return self.root / "points"

    def point(self, index: int, slug: str, round_: int) -> Path:
        return self.points / f"{index:02d}-{slug}" / f"round-{round_}"

    def point_folders(self, index: int) -> list[Path]:
        """The folders of the point's rounds, or of its one run (points/NN-slug: a tune from before the rounds);
        a folder set aside by an interrupted sweep is not one."""
        return [f for f in self.points.glob(f"{index:02d}-*") if ".interrupted-" not in f.name]

    def missing_point(self, index: int) -> Path:
        return self.points / f"{index:02d}-missing"


def tune_runs() -> list[Path]:
    """The tune.json of every make tune run under results/, newest first."""
    return sorted(results_dir().glob("*-tune*/tune.json"), reverse=True)


def results_dir() -> Path:
    return Path(os.environ.get("RESULTS_DIR") or ROOT / "results")


def history_path() -> Path:
    return results_dir() / "history.jsonl"


def gate_latest_dir() -> GatePaths:
    """make gate's outputs of the latest gate, at a path a pipeline can name before it knows the run's id."""
    return GatePaths(results_dir() / "gate")


def history_figure() -> Path:
    return results_dir() / "history.png"


def gate_calibration_path() -> Path:
    """make gate-calibrate's figures, which a later gate's tolerance is judged against."""
    return results_dir() / "gate-calibration.json"


def testbed_ceiling_path() -> Path:
    """The direct checks of the testbed's ceiling (capbench/engine/ceiling_probe.py), one per machine and settings: a fact
    of this machine, kept beside the checkout's other local state and shared by every results folder."""
    return ROOT / ".capbench" / "testbed-ceiling.json"


def aa_band_path() -> Path:
    """The A/A duets' bands (make gate-aa), which a later duet gate reads."""
    return results_dir() / "aa-band.json"


def git_sha() -> str:
    done = subprocess.run(["git", "rev-parse", "--short=7", "HEAD"], cwd=ROOT, capture_output=True, text=True)
    sha = done.stdout.strip() if done.returncode == 0 else "nogit"
    dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=ROOT,
                           capture_output=True, text=True).stdout.strip()
    return sha + ("-dirty" if dirty else "")


def new_run(kind: str) -> tuple[str, RunPaths]:
    """A new, empty run folder: <UTC time>-<sha>-<kind> (a suffix if that exists already)."""
    base = f"{time.strftime('%Y%m%dT%H%M%SZ', time.gmtime())}-{git_sha()}-{kind}"
    parent = results_dir()
    parent.mkdir(parents=True, exist_ok=True)
    for n in range(100):
        run_id = base if n == 0 else f"{base}.{n}"
        try:
            (parent / run_id).mkdir()
        except FileExistsError:
            continue
        return run_id, RunPaths(parent / run_id)
    raise RuntimeError(f"cannot create a run folder under {parent}")
