"""The cluster's settings as the shell resolves and checks them (cluster/load-settings.sh print): the profile
and the Tomcat tunables, with the environment's overrides, by the one rule written there. The harness never
reads those files itself, so the cluster and the run's record cannot disagree. The credentials are not
included."""
from __future__ import annotations

import functools
import os
import subprocess

from hosts.topology import ROOT

LOAD_SETTINGS = ROOT / "cluster" / "load-settings.sh"


class SettingsRefused(ValueError):
    """A cluster setting the shell's rules refuse: each problem on a line of its own."""


def cluster_settings(overrides: dict[str, str] | None = None) -> dict[str, str]:
    """KEY → value as the cluster runs with them (this process's environment, and `overrides` over it)."""
    done = subprocess.run(["bash", str(LOAD_SETTINGS), "print"], env={**os.environ, **(overrides or {})},
                          capture_output=True, text=True, timeout=60)
    if done.returncode != 0:
        lines = [line.removeprefix("capbench: ") for line in done.stderr.splitlines() if line.strip()]
        raise SettingsRefused("\n".join(lines) or f"cluster/load-settings.sh exited {done.returncode}")
    return dict(line.split("=", 1) for line in done.stdout.splitlines() if "=" in line)


def profile_name() -> str:
    return os.environ.get("PROFILE") or "small"


@functools.cache
def grinder_path() -> str:
    """Where the Grinder's /info, /health and /grind are on each node: "" (at /), or "/capbench" when a user's
    application takes the nodes' other paths (APP_WAR; cluster/load-settings.sh decides). Read once a process."""
    return cluster_settings().get("GRINDER_PATH", "")
