"""metrics/pcp-loggers' keeping of a pmlogger (the controller's script, run here with a stand-in pmlogger on
PATH: what is tested is the script's own supervision): one that exits on its own after logging a while is
started again into the host's next archive; one that exits at once is not; a stop closes the one running."""
from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path

from conftest import ROOT

SCRIPT = ROOT / "metrics" / "pcp-loggers"
# Logs until SIGTERM, except the first session, which ends on its own after FIRST_S (as pmlogger does after
# pmcd's state changed and its metrics could not be looked up); with STUCK, SIGTERM does not end it (as a
# pmlogger inside a reconnect to a host gone).
STAND_IN = """#!/bin/bash
base=${@: -1}
echo "started" > "$base.log"
: > "$base.meta"
trap 'echo "Log finished: stopped" >> "$base.log"; [ -n "$STUCK" ] || exit 0' TERM
if [ "$(ls "$(dirname "$base")"/*.meta | wc -l)" -eq 1 ]; then
    sleep "$FIRST_S"; echo "Log finished: on its own" >> "$base.log"; exit 0
fi
while :; do sleep 0.1; done
"""


def keep(tmp_path: Path, first_s: float, stuck: bool = False, stop_after_s: float | None = None) -> Path:
    (tmp_path / "bin").mkdir()
    stand_in = tmp_path / "bin" / "pmlogger"
    stand_in.write_text(STAND_IN)
    stand_in.chmod(0o755)
    (tmp_path / "run" / "db").mkdir(parents=True)
    env = {**os.environ, "PATH": f"{tmp_path / 'bin'}:{os.environ['PATH']}", "RESTART_AFTER_S": "2",
           "FIRST_S": str(first_s), "STUCK": "1" if stuck else ""}
    # Started as pcp-loggers starts it: detached, so that it is not this process's child (a child that exited
    # would stay a zombie here, alive to stop's `kill -0`).
    started = subprocess.run(["bash", "-c", f'setsid nohup bash "{SCRIPT}" keep "{tmp_path}/run" db /dev/null '
                              '</dev/null >/dev/null 2>&1 & echo $!'], env=env, capture_output=True, text=True,
                             check=True)
    keeper = int(started.stdout)
    (tmp_path / "run" / "db" / "pmlogger.pid").write_text(f"{keeper}\n")
    time.sleep(first_s + 2 if stop_after_s is None else stop_after_s)
    began = time.monotonic()
    stopped = subprocess.run(["bash", str(SCRIPT), "stop", str(tmp_path / "run")], env=env, check=True, timeout=30,
                             capture_output=True, text=True)
    if stuck:
        assert "still running 10 s after SIGTERM" in stopped.stderr
        time.sleep(0.5)
        left = subprocess.run(["pgrep", "-f", str(tmp_path / "run")], capture_output=True, text=True).stdout
        assert left == "", f"left running: {left}"  # the pmlogger too, not only the loop keeping it
    else:
        assert stopped.stderr == "" and time.monotonic() - began < 5, stopped.stderr  # not killed after its 10 s
    assert not running(keeper)
    return tmp_path / "run" / "db"


def running(pid: int) -> bool:
    """Whether the process runs (a zombie not yet reaped by whoever adopted it does not)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


def test_a_logger_that_ends_on_its_own_is_started_again_into_the_next_archive_and_stopped_cleanly(tmp_path):
    host = keep(tmp_path, first_s=3)
    assert (host / "db.log").read_text() == "started\nLog finished: on its own\n"
    assert (host / "db-2.log").read_text() == "started\nLog finished: stopped\n"
    assert not (host / "db-3.meta").exists() and not (host / "pmlogger.pid").exists()


def test_a_logger_that_ends_at_once_is_not_started_again(tmp_path):
    host = keep(tmp_path, first_s=0.2)
    assert sorted(p.name for p in host.iterdir()) == ["db.log", "db.meta"]


def test_a_logger_that_does_not_stop_is_killed_with_the_loop_keeping_it(tmp_path):
    host = keep(tmp_path, first_s=60, stuck=True, stop_after_s=1)
    assert (host / "db.log").read_text() == "started\n"  # killed: it never closed
