"""One bench per cluster: a second is refused naming the first; the lock goes with its holder, however it ends."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import pytest

from capbench.hosts import runlock
from capbench.hosts.compose import Compose
from capbench.hosts.vagrant import Vagrant
from conftest import ROOT

# A bench on a Compose project: the backend names the cluster from the environment, as make runs it.
HOLDER = """
import time
from capbench.hosts import runlock
lock = runlock.acquire("make bench-cluster")
print("held", flush=True)
time.sleep(60)
"""


def cluster_id(backend, monkeypatch, **environ: str) -> str:
    for key, value in environ.items():
        monkeypatch.setenv(key, value)
    return backend().lock_id()


@pytest.fixture
def project():
    name = f"capbench-lock-test-{os.getpid()}"
    yield name
    runlock.lock_path(f"compose-{name}").unlink(missing_ok=True)


def hold(project: str) -> subprocess.Popen:
    holder = subprocess.Popen([sys.executable, "-c", HOLDER], cwd=ROOT, stdout=subprocess.PIPE, text=True,
                              env={**os.environ, "BACKEND": "compose", "COMPOSE_PROJECT_NAME": project})
    assert holder.stdout.readline().strip() == "held"
    return holder


def test_a_second_bench_is_refused_naming_the_first_and_may_start_once_it_is_killed(project, monkeypatch):
    holder = hold(project)
    same = cluster_id(Compose, monkeypatch, COMPOSE_PROJECT_NAME=project)
    try:
        with pytest.raises(runlock.Busy) as busy:
            runlock.acquire("make bench-single", same)
        message = str(busy.value)
        assert f"compose-{project}" in message and "make bench-cluster" in message
        assert f"pid {holder.pid}" in message and "nothing was started" in message
    finally:
        holder.send_signal(signal.SIGKILL)  # the harshest end: no handler runs, the kernel drops the flock
        holder.wait()
    runlock.acquire("make bench-single", same).close()


def test_clusters_of_other_projects_and_backends_are_locked_apart(project, monkeypatch):
    holder = hold(project)
    other = cluster_id(Compose, monkeypatch, COMPOSE_PROJECT_NAME=project + "-other")
    vms = cluster_id(Vagrant, monkeypatch, VAGRANT_VM_PREFIX=project)
    try:
        runlock.acquire("other", other).close()
        runlock.acquire("vms", vms).close()
    finally:
        holder.kill()
        holder.wait()
        runlock.lock_path(other).unlink(missing_ok=True)
        runlock.lock_path(vms).unlink(missing_ok=True)


def test_the_bench_refuses_while_another_runs_before_it_starts_anything(project):
    holder = hold(project)
    try:
        started = time.monotonic()
        done = subprocess.run([sys.executable, "-m", "capbench.commands.bench", "single"], cwd=ROOT, capture_output=True,
                              text=True, timeout=120, env={**os.environ, "COMPOSE_PROJECT_NAME": project,
                                                           "BACKEND": "compose", "RESULTS_DIR": "/nonexistent"})
        assert done.returncode == 2
        assert "capbench: another bench is running on this cluster" in done.stderr, done.stderr
        assert not os.path.exists("/nonexistent"), "a results folder was made"
        assert time.monotonic() - started < 60
    finally:
        holder.kill()
        holder.wait()
