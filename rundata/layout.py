"""The results folder: this module alone names its paths. results/<run-id>/ holds run.json (settings, versions,
git sha), steps.jsonl (one line per step, written as it completes), summary.json, the tool's raw output under
raw/, each step's latency histograms under latency/ (HdrHistogram logs), PCP's archives under pcp/, and PARTIAL while a run has not ended normally; results/history.jsonl has one
line per run. RESULTS_DIR moves the whole folder (the tests do)."""
from __future__ import annotations

import os
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent  # the capbench checkout


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

    @property
    def report(self) -> Path:
        return self.root / "report.html"

    @property
    def profiles(self) -> Path:
        """Each profiled step's recordings (.jfr), flame graphs and heap histograms (engine/profile_step.py); made on
        demand."""
        self.root.joinpath("profiles").mkdir(exist_ok=True)
        return self.root / "profiles"

    def hlog(self, step: int, host: str | None = None) -> Path:
        """A step's latency as an HdrHistogram interval log (rundata/hlog.py): the step's, or one load host's part
        of it."""
        return self.root / "latency" / f"step-{step:03d}{'-' + host if host else ''}.hlog"

    def analysis(self, name: str) -> Path:
        """A bench kind's whole analysis beside the summary (failover.json, stress.json)."""
        return self.root / f"{name}.json"


def results_dir() -> Path:
    return Path(os.environ.get("RESULTS_DIR") or ROOT / "results")


def history_path() -> Path:
    return results_dir() / "history.jsonl"


def gate_latest_dir() -> Path:
    """make gate's outputs of the latest gate, at a path a pipeline can name before it knows the run's id."""
    return results_dir() / "gate"


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
