"""What a run records when it breaks off (load/runner.py execute): the summary says partial with the reason, the
PARTIAL marker stays, and a failure the harness did not foresee is raised again after it is recorded."""
from __future__ import annotations

import json
import subprocess
from types import SimpleNamespace

import pytest

from load import runner
from rundata.layout import RunPaths


def bench_whose_run_raises(tmp_path, problem: BaseException | None):
    """A bench whose kind's run raises `problem` (returns normally when None)."""
    def run(_bench):
        if problem is not None:
            raise problem
    kind = SimpleNamespace(logs_whole_run=False, restores_rotation=False, run=run)
    return SimpleNamespace(paths=RunPaths(tmp_path), kind=kind, prepare=lambda: None,
                           monitoring=SimpleNamespace(monitor=None, finish=lambda: None),
                           run_json=lambda: {"schema": "test"}, lb_events=SimpleNamespace(collect=lambda: None))


@pytest.fixture(autouse=True)
def summary_of_the_outcome(monkeypatch):
    monkeypatch.setattr(runner, "summarize", lambda bench, status, error, started: {"status": status, "error": error})


def test_a_host_command_past_its_timeout_ends_the_run_as_partial_with_the_reason(tmp_path):
    bench = bench_whose_run_raises(tmp_path, subprocess.TimeoutExpired(["sh", "-c", "curl"], 42))
    summary, code = runner.execute(bench)
    assert code == 1 and summary["status"] == "partial" and "timed out after 42 seconds" in summary["error"]
    assert json.loads(bench.paths.summary.read_text()) == summary and bench.paths.partial_marker.exists()


def test_an_unforeseen_failure_is_recorded_as_partial_then_raised(tmp_path):
    bench = bench_whose_run_raises(tmp_path, ValueError("Expecting value: line 1 column 1 (char 0)"))
    with pytest.raises(ValueError):
        runner.execute(bench)
    written = json.loads(bench.paths.summary.read_text())
    assert written == {"status": "partial", "error": "ValueError: Expecting value: line 1 column 1 (char 0)"}
    assert bench.paths.partial_marker.exists() and bench.paths.run_json.exists()


def test_a_run_that_ends_normally_is_complete_and_loses_its_marker(tmp_path):
    bench = bench_whose_run_raises(tmp_path, None)
    summary, code = runner.execute(bench)
    assert (summary["status"], code) == ("complete", 0) and not bench.paths.partial_marker.exists()
