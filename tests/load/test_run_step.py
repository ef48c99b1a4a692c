"""load/run-step, the wrapper each step's generator runs under on a load host, run here as a load host runs it:
the harness archives the step's folder the moment it returns (capbench/load/loadhost.py), so nothing it started may
change that folder afterwards."""
from __future__ import annotations

import subprocess
import time
from pathlib import Path

from capbench.load.drivers import Envelope

RUN_STEP = Path(__file__).resolve().parents[2] / "load" / "run-step"


def test_a_rename_under_way_when_the_tool_ends_is_finished_before_run_step_returns(tmp_path):
    # An `mv` slowed to 0.6 s is running in the watcher when the 0.3-s tool ends and the watcher is stopped.
    # Killed outright, the watcher left that rename to land 0.3 s after run-step returned, inside the folder tar
    # was reading ("tar: .: file changed as we read it" ended a duet, 2026-11-28).
    shims = tmp_path / "bin"
    shims.mkdir()
    slow_mv = shims / "mv"
    slow_mv.write_text('#!/bin/sh\nsleep 0.6\nexec /bin/mv "$@"\n')
    slow_mv.chmod(0o755)
    step = tmp_path / "step"
    subprocess.run([str(RUN_STEP), str(step), "sleep", "0.3"], env={"PATH": f"{shims}:/usr/bin:/bin"},
                   check=True, timeout=30, capture_output=True)
    left = sorted(p.name for p in step.iterdir())
    time.sleep(1)
    assert sorted(p.name for p in step.iterdir()) == left == ["envelope", "pid", "stderr", "stdout"]
    envelope = Envelope.parse((step / "envelope").read_text())
    assert envelope.exit_status == 0 and envelope.tool_cpu_s is not None and envelope.tool_cpu_s >= 0, envelope
