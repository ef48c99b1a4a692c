"""The harness installs as one package: a wheel built from pyproject.toml holds capbench alone, and installed (not
editable) into a fresh venv with the libraries pyproject declares, its `capbench` command runs from any folder:
inside a checkout, or with CAPBENCH_HOME naming one; elsewhere it refuses in one line. (make setup's editable
install is what every other test runs.)"""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from conftest import ROOT


def run(args: list, cwd: Path, **env: str) -> subprocess.CompletedProcess:
    clean = {k: v for k, v in os.environ.items() if k not in ("CAPBENCH_HOME", "VIRTUAL_ENV", "PYTHONPATH")}
    return subprocess.run([str(a) for a in args], cwd=cwd, env={**clean, **env}, capture_output=True, text=True,
                          timeout=600)


@pytest.fixture(scope="module")
def installed(tmp_path_factory) -> tuple[Path, Path]:
    """(the wheel, the venv it was installed into with its declared dependencies)."""
    where = tmp_path_factory.mktemp("packaging")
    # Built from a copy of what the wheel is made of, so that setuptools' build folders stay out of the checkout.
    source = where / "source"
    shutil.copytree(ROOT / "capbench", source / "capbench", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(ROOT / "pyproject.toml", source)
    built = run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--disable-pip-version-check",
                 "-w", where / "wheel", source], cwd=where)
    assert built.returncode == 0, built.stderr
    wheel = next((where / "wheel").glob("capbench-*.whl"))
    made = run([sys.executable, "-m", "venv", where / "venv"], cwd=where)
    assert made.returncode == 0, made.stderr
    done = run([where / "venv" / "bin" / "pip", "install", "-q", "--disable-pip-version-check", wheel], cwd=where)
    assert done.returncode == 0, done.stderr
    return wheel, where / "venv"


def test_the_wheel_and_the_install_hold_capbench_alone(installed):
    wheel, venv = installed
    with zipfile.ZipFile(wheel) as archive:
        top = {name.split("/")[0] for name in archive.namelist()}
    assert top == {"capbench", "capbench-0.1.0.dist-info"}
    record = run([venv / "bin" / "python", "-c", "import importlib.metadata as m; "
                  "print('\\n'.join(str(f) for f in m.files('capbench')))"], cwd=venv)
    files = record.stdout.split()
    assert {f.split("/")[0] for f in files if not f.startswith("..")} == {"capbench", "capbench-0.1.0.dist-info"}
    assert [f for f in files if f.startswith("..")] == ["../../../bin/capbench"]  # the command, in the venv's bin


def test_the_installed_command_answers_from_another_folder(installed, tmp_path):
    _, venv = installed
    capbench = venv / "bin" / "capbench"
    for args in ([capbench, "--help"], [venv / "bin" / "python", "-m", "capbench", "--help"]):
        done = run(args, cwd=tmp_path)
        assert done.returncode == 0 and "commands:" in done.stdout, done.stderr
    # Its libraries were installed with it (pyproject's dependencies), from the wheel, not from this checkout.
    where = run([venv / "bin" / "python", "-c", "import capbench, matplotlib, scipy, hdrh, yaml; "
                 "print(capbench.__file__)"], cwd=tmp_path)
    assert where.returncode == 0, where.stderr
    assert str(venv) in where.stdout
    results = tmp_path / "results"
    inside = run([capbench, "bench", "cluster", "--check-only"], cwd=ROOT / "docs", RESULTS_DIR=str(results))
    assert inside.returncode == 0, inside.stderr
    named = run([capbench, "bench", "cluster", "--check-only"], cwd=tmp_path, CAPBENCH_HOME=str(ROOT),
                RESULTS_DIR=str(results))
    assert named.returncode == 0, named.stderr
    bad = run([capbench, "bench", "cluster", "STEP_S=0", "--check-only"], cwd=tmp_path, CAPBENCH_HOME=str(ROOT),
              RESULTS_DIR=str(results))
    assert bad.returncode == 2 and "STEP_S" in bad.stderr, bad.stderr


def test_outside_a_checkout_the_command_refuses_in_one_line(installed, tmp_path):
    _, venv = installed
    done = run([venv / "bin" / "capbench", "bench", "cluster", "--check-only"], cwd=tmp_path)
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == [
        "capbench: no capbench checkout here: run capbench inside a clone of the project (the folder with "
        "compose.yaml and cluster/), or set CAPBENCH_HOME to one"]
    wrong = run([venv / "bin" / "capbench", "status"], cwd=tmp_path, CAPBENCH_HOME=str(tmp_path))
    assert wrong.returncode == 2 and f"CAPBENCH_HOME='{tmp_path}' is not a capbench checkout" in wrong.stderr
