"""Only what the user named counts (capbench/commands/configuration.py): the command's words, make's command line,
CAPBENCH_ variables and a settings file, each over the one before; a plain variable of the shell changes nothing;
a name that is not a setting is refused wherever it was given. The resolution, then the command as a shell runs it."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from capbench.commands.configuration import NamedWrongly, resolve
from conftest import ROOT

CAPBENCH = Path(sys.executable).parent / "capbench"
SHELL = {"PATH": "/usr/bin:/bin", "HOME": "/root"}


def test_a_plain_variable_changes_nothing_and_its_prefixed_twin_does():
    config = resolve({}, {**SHELL, "USERS": "5", "TOMCAT_MAX_THREADS": "8", "CAPBENCH_STEP_S": "7"})
    assert dict(config.named) == {"STEP_S": "7"}
    assert "USERS" not in config.environ and "TOMCAT_MAX_THREADS" not in config.environ
    assert config.environ["STEP_S"] == "7" and config.environ["PATH"] == SHELL["PATH"]


def test_each_source_is_over_the_one_before(tmp_path):
    file = tmp_path / "bench.env"
    file.write_text("# a bench of mine\nSTEP_S=20\nHOLD_S='30'\nexport USERS=40\nPROFILE=lab\n")
    environ = {**SHELL, "CAPBENCH_SETTINGS_FILE": str(file), "CAPBENCH_HOLD_S": "31", "CAPBENCH_USERS": "41",
               "MAKEFLAGS": "s -- USERS=42 START_RATE=300"}
    config = resolve({"START_RATE": "400"}, environ)
    assert {k: config.named[k] for k in ("STEP_S", "HOLD_S", "USERS", "START_RATE", "PROFILE")} == \
        {"STEP_S": "20", "HOLD_S": "31", "USERS": "42", "START_RATE": "400", "PROFILE": "lab"}
    assert config.source["STEP_S"] == f"{file}:2" and config.source["START_RATE"] == "the command"
    assert config.source["USERS"] == "make's command line"


def test_the_environment_it_gives_resolves_to_itself():
    """The command restarts itself in config.environ when it differs from its own: once, never again."""
    first = resolve({"STEP_S": "9"}, {**SHELL, "USERS": "5", "MAKEFLAGS": " -- HOLD_S=4"})
    first = first.with_setting("BACKEND", "compose", "chosen")
    again = resolve({"STEP_S": "9"}, dict(first.environ))
    assert dict(again.environ) == dict(first.environ)
    assert again.source["BACKEND"] == "chosen" and again.source["HOLD_S"] == "make's command line"


def test_a_tools_own_variable_keeps_its_spelling():
    config = resolve({}, {**SHELL, "COMPOSE_PROJECT_NAME": "mine", "CAPBENCH_HOME": "/srv/capbench"})
    assert config.environ["COMPOSE_PROJECT_NAME"] == "mine" and config.environ["CAPBENCH_HOME"] == "/srv/capbench"
    assert "CAPBENCH_COMPOSE_PROJECT_NAME" not in config.environ


def test_every_wrong_name_is_refused_wherever_it_was_given(tmp_path):
    file = tmp_path / "bench.env"
    file.write_text("STEP_S=10\n\nHOLD_SS=5\nnot a line\nSETTINGS_FILE=other.env\n")
    with pytest.raises(NamedWrongly) as refused:
        resolve({"STEPS_S": "1", "SETTINGS_FILE": str(file)},
                {**SHELL, "CAPBENCH_USER": "3", "MAKEFLAGS": " -- NODE2_CPU=0.3"})
    assert refused.value.lines == [
        "CAPBENCH_USER: USER is not a setting: did you mean USERS?",
        "NODE2_CPU is not a setting: did you mean NODE2_CPUS or NODE_CPUS?",
        "STEPS_S is not a setting: did you mean STEP_S?",
        f"{file}:3: HOLD_SS is not a setting: did you mean HOLD_S?",
        f"{file}:4: 'not a line' is not KEY=VALUE",
        f"{file}:5: a settings file cannot name another (SETTINGS_FILE)"]
    with pytest.raises(NamedWrongly, match="SETTINGS_FILE='/nonexistent.env' is not a file"):
        resolve({"SETTINGS_FILE": "/nonexistent.env"}, SHELL)


def command(*words: str, tmp_path: Path, **environ: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "CAPBENCH_RESULTS_DIR": str(tmp_path / "results"), "CAPBENCH_BACKEND": "compose",
           "COMPOSE_PROJECT_NAME": "capbench-configuration-test", **environ}
    env.pop("MAKEFLAGS", None)  # (make test's own line is not this command's)
    return subprocess.run([str(CAPBENCH), *words], cwd=tmp_path, env=env, capture_output=True, text=True,
                          timeout=120)


def test_the_command_ignores_the_shells_users_and_checks_capbench_users(tmp_path):
    shell = command("bench", "cluster", "--check-only", tmp_path=tmp_path, USERS="0")
    assert shell.returncode == 0, shell.stderr
    assert "USERS" not in shell.stdout.replace("CAPBENCH_", "")
    prefixed = command("bench", "cluster", "--check-only", tmp_path=tmp_path, CAPBENCH_USERS="0")
    assert prefixed.returncode == 2
    assert prefixed.stderr.strip() == "capbench: USERS='0' is not allowed: use an integer from 1 to 1000000"
    named = command("bench", "cluster", "--check-only", tmp_path=tmp_path, CAPBENCH_USERS="5", USERS="0")
    assert named.returncode == 0, named.stderr
    assert "USERS=5 (the environment (CAPBENCH_))" in named.stdout


def test_the_command_reads_a_settings_file_and_says_where_a_wrong_line_is(tmp_path):
    (tmp_path / "mine.env").write_text("STEP_S=12\nQUICK=1\n")
    done = command("bench", "cluster", "SETTINGS_FILE=mine.env", "--check-only", tmp_path=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "STEP_S=12 (mine.env:1)" in done.stdout and "QUICK=1 (mine.env:2)" in done.stdout
    (tmp_path / "typo.env").write_text("STEP_S=12\nSTEPS_S=12\n")
    wrong = command("bench", "cluster", "SETTINGS_FILE=typo.env", "--check-only", tmp_path=tmp_path)
    assert wrong.returncode == 2
    assert wrong.stderr.strip() == "capbench: typo.env:2: STEPS_S is not a setting: did you mean STEP_S?"
    assert not (tmp_path / "results").exists()


@pytest.mark.parametrize("given, refused", [({"BACKEND": "kubernetes"}, False), ({"CAPBENCH_BACKEND": "kubernetes"}, True),
                                            ({"words": "BACKEND=kubernetes"}, True)])
def test_makes_backend_is_the_one_named_not_the_shells(given, refused):
    """The Makefile chooses the backend when it is read: from its line or CAPBENCH_BACKEND, never a BACKEND the
    shell holds (make -n: nothing runs)."""
    env = {k: v for k, v in os.environ.items() if k not in ("MAKEFLAGS", "MAKELEVEL", "BACKEND", "CAPBENCH_BACKEND")}
    given = dict(given)
    words = given.pop("words", "").split()
    done = subprocess.run(["make", "--no-print-directory", "-n", "status", *words], cwd=ROOT, env={**env, **given},
                          capture_output=True, text=True, timeout=60)
    assert (done.returncode != 0) == refused, done.stderr
    assert ("BACKEND='kubernetes' is not allowed" in done.stderr) == refused, done.stderr
