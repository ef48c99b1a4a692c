"""python -m capbench.hosts, as make and the shell scripts run it: with the machine's own Python and the standard library
alone (before the harness's venv exists), each backend's make targets, and bad names refused in one line."""
from __future__ import annotations

import subprocess

import pytest

from conftest import ROOT


def hosts(*argv: str, **env: str) -> subprocess.CompletedProcess:
    return subprocess.run(["/usr/bin/python3", "-s", "-m", "capbench.hosts", *argv], cwd=ROOT, capture_output=True,
                          text=True, timeout=60, env={"PATH": "/usr/bin:/bin", **env})


@pytest.mark.parametrize("backend, built, setup", [("compose", "images", ""), ("vagrant", "artifacts", "vagrant-setup"),
                                                    ("swarm", "images", "")])
def test_each_backend_names_what_it_builds_and_what_it_installs(backend, built, setup):
    assert hosts("backend", BACKEND=backend).stdout == f"{backend}\n"
    assert hosts("built", BACKEND=backend).stdout == f"{built}\n"
    assert hosts("setup", BACKEND=backend).stdout == f"{setup}\n"


def test_bad_names_are_refused_before_anything_is_asked_of_a_host():
    done = hosts("backend", BACKEND="kubernetes")
    assert done.returncode == 2
    assert done.stderr == "capbench: BACKEND='kubernetes' is not allowed: use compose, vagrant or swarm (or leave it unset)\n"
    done = hosts("rotation", "node7", "maint", BACKEND="compose")
    assert done.returncode == 2
    assert done.stderr == "capbench: NODE='node7' is not a node: use one of node1 node2 node3\n"
