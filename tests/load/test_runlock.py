"""One bench per cluster: a second is refused naming the first; the lock goes with its holder, however it ends."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import pytest

from conftest import ROOT
from load import runlock

HOLDER = """
import sys, time
from load import runlock
lock = runlock.acquire("make bench-cluster", {"COMPOSE_PROJECT_NAME": sys.argv[1]})
print("held", flush=True)
time.sleep(60)
"""


@pytest.fixture
def project():
    name = f"capbench-lock-test-{os.getpid()}"
    yield name
    runlock.lock_path({"COMPOSE_PROJECT_NAME": name}).unlink(missing_ok=True)


def hold(project: str) -> subprocess.Popen:
    holder = subprocess.Popen([sys.executable, "-c", HOLDER, project], cwd=ROOT, stdout=subprocess.PIPE, text=True)
    assert holder.stdout.readline().strip() == "held"
    return holder


def test_a_second_bench_is_refused_naming_the_first_and_may_start_once_it_is_killed(project):
    holder = hold(project)
    try:
        with pytest.raises(runlock.Busy) as busy:
            runlock.acquire("make bench-single", {"COMPOSE_PROJECT_NAME": project})
        message = str(busy.value)
        assert f"compose-{project}" in message and "make bench-cluster" in message
        assert f"pid {holder.pid}" in message and "nothing was started" in message
    finally:
        holder.send_signal(signal.SIGKILL)  # the harshest end: no handler runs, the kernel drops the flock
        holder.wait()
    runlock.acquire("make bench-single", {"COMPOSE_PROJECT_NAME": project}).close()


def test_clusters_of_other_projects_and_backends_are_locked_apart(project):
    holder = hold(project)
    try:
        runlock.acquire("other", {"COMPOSE_PROJECT_NAME": project + "-other"}).close()
        runlock.acquire("vms", {"BACKEND": "vagrant", "VAGRANT_VM_PREFIX": project}).close()
    finally:
        holder.kill()
        holder.wait()
        runlock.lock_path({"COMPOSE_PROJECT_NAME": project + "-other"}).unlink(missing_ok=True)
        runlock.lock_path({"BACKEND": "vagrant", "VAGRANT_VM_PREFIX": project}).unlink(missing_ok=True)


def test_the_bench_refuses_while_another_runs_before_it_starts_anything(project):
    holder = hold(project)
    try:
        started = time.monotonic()
        done = subprocess.run([sys.executable, "-m", "load.bench", "single"], cwd=ROOT, capture_output=True,
                              text=True, timeout=120, env={**os.environ, "COMPOSE_PROJECT_NAME": project,
                                                           "BACKEND": "compose", "RESULTS_DIR": "/nonexistent"})
        assert done.returncode == 2
        assert "capbench: another bench is running on this cluster" in done.stderr, done.stderr
        assert not os.path.exists("/nonexistent"), "a results folder was made"
        assert time.monotonic() - started < 60
    finally:
        holder.kill()
        holder.wait()
