"""Shared helpers for the Python tests: run the project's own scripts exactly as make does."""
from __future__ import annotations

import os
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
COMPOSE = str(ROOT / "cluster" / "compose" / "compose.sh")


def run(args: list[str], env: dict[str, str] | None = None, timeout: float = 600,
        check: bool = True) -> subprocess.CompletedProcess:
    """Runs a command from the repository root with extra environment; raises with its output on failure."""
    full_env = {**os.environ, **(env or {})}
    done = subprocess.run(args, cwd=ROOT, env=full_env, capture_output=True, text=True, timeout=timeout)
    if check and done.returncode != 0:
        raise AssertionError(f"{' '.join(args)} exited {done.returncode}\n{done.stdout}\n{done.stderr}")
    return done


def compose(*args: str, env: dict[str, str] | None = None, timeout: float = 600,
            check: bool = True) -> subprocess.CompletedProcess:
    return run([COMPOSE, *args], env=env, timeout=timeout, check=check)
