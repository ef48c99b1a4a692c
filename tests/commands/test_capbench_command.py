"""The `capbench` command as a user's shell runs it (the console script make setup installs into .venv/bin):
its help lists the commands and each measuring command's settings, and bad words or values are refused with
exit 2 in one line before anything starts, with no cluster at all."""
from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from capbench.commands.cli import COMMANDS
from conftest import ROOT, named

CAPBENCH = Path(sys.executable).parent / "capbench"


def capbench(*words: str, tmp_path: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, **named({"RESULTS_DIR": str(tmp_path / "results"), "BACKEND": "compose"}),
           "COMPOSE_PROJECT_NAME": "capbench-cli-test"}
    return subprocess.run([str(CAPBENCH), *words], cwd=tmp_path, env=env, capture_output=True, text=True,
                          timeout=120)


def test_help_lists_every_command(tmp_path):
    done = capbench("--help", tmp_path=tmp_path)
    assert done.returncode == 0, done.stderr
    listed = [line.split()[0] for line in done.stdout.split("commands:\n")[1].split("\n\n")[0].splitlines()]
    assert listed == list(COMMANDS)
    assert {"bench", "tune", "gate", "report", "compare", "status"} <= set(listed)


def test_a_kinds_help_gives_its_own_settings_and_the_shared_ones_from_the_settings_table(tmp_path):
    done = capbench("bench", "failover", "--help", tmp_path=tmp_path)
    assert done.returncode == 0, done.stderr
    own, shared = done.stdout.split("bench-failover's own settings:")[1].split("the settings every bench shares:")
    assert "FAULT=kill  (one of kill, freeze, partition, delay)" in own
    assert "STEP_S=" in shared and "QUICK_STEP_S=" in shared
    gate = capbench("gate", "--help", tmp_path=tmp_path)
    assert "GATE_DROP_PCT=" in gate.stdout and "DUET_A=" in gate.stdout, gate.stdout


# (words, what the one line says)
BAD = [
    (("bench", "cluster", "STEP_S=0"), "STEP_S='0' is not allowed: use an integer from 1 to 3600"),
    (("bench", "everything"), "'bench-everything' is not a bench"),
    (("bench",), "capbench bench takes one KIND"),
    (("gate", "GATE_BENCH=usl"), "GATE_BENCH='usl' is not allowed: use one of single, cluster"),
    (("gate", "quick=1"), "'quick=1' is not a setting: give KEY=VALUE with an upper-case KEY"),
    (("gate", "cluster"), "capbench gate: 'cluster' is neither a setting (KEY=VALUE) nor one of its arguments"),
    (("gate", "--fast"), "capbench gate: no option --fast"),
    (("tune", "MAXTHREADS=0"), "TOMCAT_MAX_THREADS='0' is not allowed: use an integer from 1 to 10000"),
    (("status", "BACKEND=kubernetes"), "BACKEND='kubernetes' is not allowed: use compose, vagrant or swarm"),
    (("benchmark",), "'benchmark' is not a command: use one of bench, tune, gate"),
    (("bench", "cluster", "STEPS_S=10", "--check-only"), "STEPS_S is not a setting: did you mean STEP_S?"),
    (("tune", "MAXTHREAD=4,16"), "MAXTHREAD is not a setting: did you mean MAXTHREADS or THREADS?"),
    (("report", "RUNS=x"), "RUNS is not a setting: did you mean RUN?"),
    (("gate", "GATE_FROB=1"), "GATE_FROB is not a setting: capbench COMMAND --help lists a command's settings"),
]


@pytest.mark.parametrize("words, message", BAD, ids=[" ".join(w) for w, _ in BAD])
def test_bad_words_are_refused_in_one_line_before_anything_starts(words, message, tmp_path):
    done = capbench(*words, tmp_path=tmp_path)
    assert done.returncode == 2, (done.stdout, done.stderr)
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("capbench: ") and message in lines[0], done.stderr
    assert not (tmp_path / "results").exists()


def test_every_unknown_name_is_refused_at_once_each_with_its_suggestion(tmp_path):
    done = capbench("bench", "cluster", "STEPS_S=10", "HOLD_SS=5", "NODE2_CPU=0.3", "--check-only", tmp_path=tmp_path)
    assert done.returncode == 2
    assert done.stderr.splitlines() == ["capbench: STEPS_S is not a setting: did you mean STEP_S?",
                                        "capbench: HOLD_SS is not a setting: did you mean HOLD_S?",
                                        "capbench: NODE2_CPU is not a setting: did you mean NODE2_CPUS or NODE_CPUS?"]
    assert not (tmp_path / "results").exists()


def test_a_typo_on_makes_command_line_is_refused_as_on_capbenchs(tmp_path):
    """make hands its command line's variables down in MAKEFLAGS; a known name there passes, an unknown one is
    refused before make builds or brings up anything."""
    env = {**os.environ, **named({"RESULTS_DIR": str(tmp_path / "results"), "BACKEND": "compose"})}
    done = subprocess.run(["make", "--no-print-directory", "bench-cluster", "STEPS_S=10", "QUICK=1"], cwd=ROOT,
                          env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 2
    # (make's own lines may come first: a tool it fetches for the venv when the Makefile is newer than it, Maven
    # leaving its colour resets in front of the next line.)
    said = [line for line in re.sub(r"\x1b\[[0-9;]*m", "", done.stderr).splitlines() if line.startswith("capbench: ")]
    assert said == ["capbench: STEPS_S is not a setting: did you mean STEP_S?"], done.stderr
    # What every node's key and every other name the commands read look like passes the same check.
    for words in (["NODE7_CPUS=0.2", "NODES=7"], ["NODE1_TOMCAT_MAX_THREADS=8"], ["COMPOSE_PROJECT_NAME=x"]):
        on_the_line = {**env, "MAKEFLAGS": " -- " + " ".join(words)}
        check = subprocess.run([str(CAPBENCH), "bench", "cluster", "--check-only"], cwd=tmp_path, env=on_the_line,
                               capture_output=True, text=True, timeout=120)
        assert "is not a setting" not in check.stderr, (words, check.stderr)
