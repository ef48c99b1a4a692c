"""The cluster's settings as the shell resolves and checks them (cluster/load-settings.sh print): the profile
and the Tomcat tunables, with the environment's overrides, by the one rule written there. The harness never
reads those files itself, so the cluster and the run's record cannot disagree. The credentials are not
included. A command resolves them once (resolved_environment) and runs in what that gives, marked, so that the
scripts it starts find them resolved and do not resolve them again."""
from __future__ import annotations

import functools
import hashlib
import os
import subprocess
from typing import Mapping

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


# What cluster/load-settings.sh's settings_mark leaves out: what a shell or make sets on its own, and the mark's
# own variables (the credentials too there, which an environment marked here never holds).
MARK = "CAPBENCH_RESOLVED"
ADDED = "CAPBENCH_RESOLVED_ADDED"
TRACE = "CAPBENCH_SETTINGS_TRACE"
UNMARKED = frozenset({"PWD", "OLDPWD", "SHLVL", "_", "MAKELEVEL", "MAKEFLAGS", "MFLAGS", "MAKEOVERRIDES",
                      "MAKE_TERMOUT", "MAKE_TERMERR", MARK, ADDED, TRACE})


def mark(environ: Mapping[str, str]) -> str:
    """The fingerprint of an environment, as cluster/load-settings.sh computes it: sorted KEY=VALUE, NUL-separated."""
    lines = sorted(f"{k}={v}" for k, v in environ.items() if k not in UNMARKED and not k.startswith("BASH_FUNC_"))
    return hashlib.sha256(b"".join(line.encode() + b"\0" for line in lines)).hexdigest()


def resolved_environment(environ: Mapping[str, str]) -> dict[str, str] | None:
    """`environ` with the cluster's settings resolved into it, once for a whole command, marked so that the
    scripts it runs do not resolve them again (cluster/load-settings.sh environment); None when the settings are
    refused (whoever asks next reports why) or the resolution would change what `environ` already gives."""
    done = subprocess.run(["bash", str(LOAD_SETTINGS), "environment"], env=dict(environ), capture_output=True,
                          timeout=60)
    if done.returncode != 0:
        return None
    resolved = dict(item.split("=", 1) for item in done.stdout.decode().split("\0") if "=" in item)
    added = {k: v for k, v in resolved.items() if k not in environ and k not in UNMARKED}
    if any(resolved.get(k, v) != v for k, v in environ.items() if k not in UNMARKED):
        return None
    marked = {**environ, **added, ADDED: " ".join(sorted(added))}
    return {**marked, MARK: mark(marked)}


def unresolved(environ: Mapping[str, str]) -> Mapping[str, str]:
    """The environment a marked one was resolved from (what the resolution added taken out); any other as it is."""
    if environ.get(MARK) != mark(environ):
        return environ
    added = set(environ.get(ADDED, "").split())
    return {k: v for k, v in environ.items() if k not in added and k not in (MARK, ADDED)}


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
