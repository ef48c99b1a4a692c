"""The `capbench` command as a user's shell runs it (the console script make setup installs into .venv/bin):
its help lists the commands and each measuring command's settings, and bad words or values are refused with
exit 2 in one line before anything starts, with no cluster at all."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from capbench.commands.cli import COMMANDS

CAPBENCH = Path(sys.executable).parent / "capbench"


def capbench(*words: str, tmp_path: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "RESULTS_DIR": str(tmp_path / "results"), "BACKEND": "compose",
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
]


@pytest.mark.parametrize("words, message", BAD, ids=[" ".join(w) for w, _ in BAD])
def test_bad_words_are_refused_in_one_line_before_anything_starts(words, message, tmp_path):
    done = capbench(*words, tmp_path=tmp_path)
    assert done.returncode == 2, (done.stdout, done.stderr)
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("capbench: ") and message in lines[0], done.stderr
    assert not (tmp_path / "results").exists()
