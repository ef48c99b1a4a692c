"""The cluster's settings are resolved once per command (capbench/hosts/cluster_settings.py's
resolved_environment): the scripts the command runs find them marked and do not resolve them again, while an
environment that differs in anything (an override, another variable) is resolved anew. Counted through
cluster/load-settings.sh's own trace (CAPBENCH_SETTINGS_TRACE)."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from capbench.hosts import cluster_settings
from conftest import ROOT

LOAD_SETTINGS = str(ROOT / "cluster" / "load-settings.sh")
CAPBENCH = Path(sys.executable).parent / "capbench"
SHELL = {"PATH": os.environ["PATH"], "HOME": os.environ.get("HOME", "/root")}


def traced(environ: dict[str, str], trace: Path) -> list[str]:
    """What one `load-settings.sh print` in `environ` did: resolved, or reused."""
    trace.unlink(missing_ok=True)
    subprocess.run(["bash", LOAD_SETTINGS, "print"], env={**environ, cluster_settings.TRACE: str(trace)},
                   check=True, capture_output=True)
    return [line.split()[0] for line in trace.read_text().splitlines()]


def test_a_marked_environment_is_reused_and_anything_changed_resolves_again(tmp_path):
    marked = cluster_settings.resolved_environment({**SHELL, "TOMCAT_MAX_THREADS": "16"})
    assert marked is not None and marked["TOMCAT_MAX_THREADS"] == "16" and marked["NODE1_CPUS"]
    trace = tmp_path / "trace"
    assert traced(marked, trace) == ["reused"]  # the shell computes the mark the harness gave
    assert traced({**marked, "TOMCAT_MAX_THREADS": "17"}, trace) == ["resolved"]  # an override
    assert traced({**marked, "SOMETHING_ELSE": "1"}, trace) == ["resolved"]  # any other variable
    assert traced({**marked, "MAKELEVEL": "2", "PWD": "/tmp"}, trace) == ["reused"]  # what make and a shell set


def test_the_resolved_environment_holds_no_credential():
    marked = cluster_settings.resolved_environment(dict(SHELL))
    secrets = (ROOT / ".capbench" / "secrets.env").read_text().splitlines()
    assert secrets and not {line.split("=", 1)[0] for line in secrets if "=" in line} & set(marked)


def test_refused_settings_give_no_resolved_environment():
    assert cluster_settings.resolved_environment({**SHELL, "TOMCAT_MAX_THREADS": "lots"}) is None


def test_unresolved_gives_back_what_was_resolved_from():
    start = {**SHELL, "CAPBENCH_STEP_S": "7", "STEP_S": "7"}
    marked = cluster_settings.resolved_environment(start)
    assert cluster_settings.unresolved(marked) == start
    tampered = {**marked, "TOMCAT_MAX_THREADS": "3"}  # not what was marked: taken as it is
    assert cluster_settings.unresolved(tampered) is tampered


@pytest.mark.parametrize("command", [["bench", "single", "--check-only"], ["bench", "cluster", "--check-only"]])
def test_a_command_resolves_the_cluster_settings_once(command, tmp_path):
    trace = tmp_path / "trace"
    environ = {**SHELL, cluster_settings.TRACE: str(trace), "CAPBENCH_RESULTS_DIR": str(tmp_path / "results"),
               "CAPBENCH_BACKEND": "compose", "NODES": "not a count"}  # a shell's NODES: changes nothing
    done = subprocess.run([str(CAPBENCH), *command], cwd=ROOT, env=environ, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert [line.split()[0] for line in trace.read_text().splitlines()].count("resolved") == 1


@pytest.mark.docker
def test_the_scripts_a_command_runs_reuse_its_resolution(tmp_path):
    """capbench status asks Compose through cluster/compose/compose.sh, which sources load-settings.sh: reused."""
    trace = tmp_path / "trace"
    environ = {**SHELL, cluster_settings.TRACE: str(trace), "CAPBENCH_BACKEND": "compose",
               "COMPOSE_PROJECT_NAME": "capbench-resolved-once"}  # a project with nothing running
    done = subprocess.run([str(CAPBENCH), "status"], cwd=ROOT, env=environ, capture_output=True, text=True)
    assert done.returncode in (0, 1), done.stderr
    lines = [line.split() for line in trace.read_text().splitlines()]
    assert [what for what, _, _ in lines].count("resolved") == 1
    assert ["reused", "compose.sh"] in [[what, script] for what, _, script in lines]
