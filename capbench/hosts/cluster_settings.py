"""The cluster's settings as the shell resolves and checks them (cluster/load-settings.sh print): the profile
and the Tomcat tunables, with the environment's overrides, by the one rule written there. The harness never
reads those files itself, so the cluster and the run's record cannot disagree. The credentials are not
included."""
from __future__ import annotations

import functools
import hashlib
import os
import subprocess

from capbench.hosts.topology import ROOT

LOAD_SETTINGS = ROOT / "cluster" / "load-settings.sh"


class SettingsRefused(ValueError):
    """A cluster setting the shell's rules refuse: each problem on a line of its own."""


def cluster_settings(overrides: dict[str, str] | None = None) -> dict[str, str]:
    """KEY → value as the cluster runs with them (this process's environment, and `overrides` over it). The shell
    resolves them once for each environment a process asks with: the same environment gives the same settings."""
    return dict(_resolved(frozenset({**os.environ, **(overrides or {})}.items())))


@functools.lru_cache(maxsize=64)
def _resolved(environment: frozenset[tuple[str, str]]) -> tuple[tuple[str, str], ...]:
    done = subprocess.run(["bash", str(LOAD_SETTINGS), "print"], env=dict(environment),
                          capture_output=True, text=True, timeout=60)
    if done.returncode != 0:
        lines = [line.removeprefix("capbench: ") for line in done.stderr.splitlines() if line.strip()]
        raise SettingsRefused("\n".join(lines) or f"cluster/load-settings.sh exited {done.returncode}")
    return tuple(line.split("=", 1) for line in done.stdout.splitlines() if "=" in line)


def war_sha256(path: str) -> str:
    """A WAR's sha256 (its path absolute, or from the checkout's root, as make gives it)."""
    digest = hashlib.sha256()
    with open(ROOT / path, "rb") as war:
        for chunk in iter(lambda: war.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


STAGED_APP = ROOT / ".capbench" / "app"  # cluster/app.sh stage's


def with_application(settings: dict[str, str]) -> dict[str, str]:
    """The settings with the application's content named (APP_SHA256) when the cluster runs one (a WAR or an
    executable JAR): its path says nothing of what the file held when the run deployed it (make gate, make
    baseline); and where the nodes run it converted from javax to jakarta (cluster/app.sh's migrate), the converted
    WAR's (APP_MIGRATED_SHA256)."""
    application = settings.get("APP_WAR") or settings.get("APP_JAR")
    if not application:
        return settings
    sha = war_sha256(application)
    named = {**settings, "APP_SHA256": sha}
    try:
        source = (STAGED_APP / "source").read_text().split()
        migrated = (STAGED_APP / "migrated").read_text().strip()
    except OSError:
        return named
    return {**named, "APP_MIGRATED_SHA256": migrated} if source[:1] == [sha] else named


def profile_name() -> str:
    return os.environ.get("PROFILE") or "small"


@functools.cache
def grinder_path() -> str:
    """Where the Grinder's /info, /health and /grind are on each node: "" (at /), or "/capbench" when a user's
    application takes the nodes' other paths (APP_WAR; cluster/load-settings.sh decides). Read once a process.
    Nodes that run an executable JAR (APP_JAR) have no Grinder: ask has_grinder() first."""
    path = cluster_settings().get("GRINDER_PATH", "")
    return "" if path == NO_GRINDER else path


NO_GRINDER = "none"  # cluster/load-settings.sh's GRINDER_PATH on nodes that run an executable JAR


@functools.cache
def has_grinder() -> bool:
    """Whether the nodes run the Grinder (at / or beside a WAR); not on nodes that run an executable JAR. Read
    once a process."""
    return cluster_settings().get("GRINDER_PATH", "") != NO_GRINDER


def routing_path() -> str:
    """A path every node answers 200, for the routing checks (the balancer names the node that answered): the
    Grinder's /info, or the application's APP_HEALTH on nodes without it."""
    return f"{grinder_path()}/info" if has_grinder() else cluster_settings().get("APP_HEALTH", "/")
