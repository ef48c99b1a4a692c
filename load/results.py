"""The results folder: one function owns its paths. results/<run-id>/ holds run.json (settings, versions,
git sha), steps.jsonl (one line per step, written as it completes), summary.json, and PARTIAL while a run
has not ended normally."""
from __future__ import annotations

import json
import os
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

from load import ROOT


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


def results_dir() -> Path:
    return Path(os.environ.get("RESULTS_DIR") or ROOT / "results")


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


def write_json(path: Path, data: dict) -> None:
    """Whole or not at all: written beside, then renamed over."""
    tmp = path.with_suffix(path.suffix + ".tmp")
    tmp.write_text(json.dumps(data, indent=2) + "\n")
    os.replace(tmp, path)


def append_jsonl(path: Path, record: dict) -> None:
    with path.open("a") as out:
        out.write(json.dumps(record) + "\n")
        out.flush()
        os.fsync(out.fileno())


def read_jsonl(path: Path) -> list[dict]:
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def write_jsonl(path: Path, records: list[dict]) -> None:
    """Replaces a JSON-lines file whole (e.g. step records with figures added after the run)."""
    tmp = path.with_suffix(path.suffix + ".tmp")
    tmp.write_text("".join(json.dumps(r) + "\n" for r in records))
    os.replace(tmp, path)
