"""What every backend offers the harness: run a command on a host, say which hosts are unhealthy, re-create a
service with settings, do a fault to a node and say when it took effect, run PCP's tools over local archives,
and bring the cluster up, down and into view. One implementation per backend (capbench/hosts/compose.py,
capbench/hosts/vagrant.py, capbench/hosts/swarm.py), chosen by name through BACKENDS; nothing outside this package asks which
backend it is."""
from __future__ import annotations

import importlib
import os
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

# name → "module:class", imported only when asked for (the Vagrant backend needs no Docker, and back).
BACKENDS = {"compose": "capbench.hosts.compose:Compose", "vagrant": "capbench.hosts.vagrant:Vagrant",
            "swarm": "capbench.hosts.swarm:Swarm"}
DEFAULT = "compose"


class ClusterError(RuntimeError):
    """The cluster is not in a state to bench (not up, unhealthy, a node that does not come back)."""


class BackendError(ValueError):
    """BACKEND names no backend: what was given, what is allowed."""


PAUSE_ATTEMPTS = 3


def paused(pause: Callable[[], object], unpause: Callable[[], object]) -> None:
    """A container frozen by `pause` (a docker pause, which raises ClusterError with Docker's answer), again when
    the kernel could not freeze every process in time (runc: "unable to freeze", seen in CI on a loaded
    machine), the half-frozen container thawed first by `unpause`; any other refusal is raised at once."""
    for attempt in range(1, PAUSE_ATTEMPTS + 1):
        try:
            pause()
            return
        except ClusterError as problem:
            if "unable to freeze" not in str(problem) or attempt == PAUSE_ATTEMPTS:
                raise
            unpause()
            time.sleep(1)


@dataclass(frozen=True)
class Done:
    """When a fault (or its undoing) took effect, as read from what did it."""
    at: float  # epoch seconds, on the harness's clock
    uncertainty_s: float
    source: str


@dataclass(frozen=True)
class Delay:
    """FAULT=delay's figures (capbench/hosts/netfault.py): added one-way latency and loss, on the node's outgoing packets."""
    ms: int = 100
    loss_pct: float = 1.0


@dataclass(frozen=True)
class LostMachine:
    """A machine of the bench that no longer answers: its name, the roles it ran, and how that was seen."""
    machine: str
    roles: tuple[str, ...]
    seen: str


class Backend(Protocol):
    name: str
    # The make target that builds what this backend's hosts run (images, or the artifacts VMs install).
    built: str
    # The make target that installs what this backend needs beyond make setup's own (None: nothing more).
    setup: str | None
    # Whether it runs the shared database host (capbench/hosts/topology.py's DATABASE) beside the others.
    database: bool
    # Whether set_cpus changes a running node's CPU quota (else a node gets another quota only by re-creation).
    live_cpus: bool
    # Whether one node may run an application image of its own beside the others' (a duet's build with its own
    # WAR or JAR); else every node runs the one image the cluster was brought up with.
    own_node_images: bool

    def exec(self, host: str, argv: list[str], stdin: bytes | None = None, timeout: float = 120,
             check: bool = True, user: str | None = None) -> subprocess.CompletedProcess:
        """Runs argv on a host of the bench as the user its processes run as (or `user`); ClusterError when
        check and it fails."""

    def unhealthy(self) -> list[str]:
        """The hosts that are not running and healthy ([] when all are)."""

    def version(self) -> str:
        """What runs the hosts, with its version (recorded in run.json)."""

    def lock_id(self) -> str:
        """Names this cluster among the others on the machine (one bench at a time on each)."""

    def up(self) -> int:
        """Brings the cluster to the current settings and waits until every host is healthy (make up)."""

    def recreate(self, hosts: tuple[str, ...], settings: dict[str, str], fresh: bool = False) -> None:
        """The hosts again with `settings` over the current ones, waited until healthy; the others keep running.
        Several hosts start at once where the backend can (a duet's twins: one JVM started a minute after the
        other would still be compiling when both are measured). fresh: new processes even where the settings
        are those they run with."""

    def set_cpus(self, node: str, cpus: str) -> bool:
        """The node's CPU quota changed while it runs, its JVM untouched (a duet's CPU-only build); False where
        this backend can only re-create it for that."""

    def fault(self, node: str, fault: str, action: str, delay: Delay | None = None) -> Done:
        """fault kill|freeze|partition|delay (the network faults: capbench/hosts/netfault.py; `delay` their figures),
        action inject|recover: does it to the node and says when it took effect."""

    def netem_missing(self, node: str) -> str:
        """'' when FAULT=delay can run on the node's machine (its kernel has netem); else why not, in one line."""

    def lost_machines(self, hosts: tuple[str, ...]) -> list[LostMachine]:
        """The machines running any of `hosts` that no longer answer, each asked once ([] on a backend whose
        hosts all run on the harness's own machine: there a host is lost, never its machine)."""

    def pcp_tools(self, script: str, pcp_dir: Path, out_dir: Path) -> None:
        """Runs a bash script where PCP's tools are, with the archives under pcp_dir at $1/pcp (read-only) and
        $1/out a folder whose files land in out_dir."""

    def down(self) -> int:
        ...

    def status(self) -> int:
        """Prints one row per host (make status)."""

    def logs(self, host: str | None, follow: bool) -> int:
        ...

    def stats(self) -> int:
        """The HAProxy stats page on this machine's loopback (make stats): where it is published, or a tunnel
        to it that serves until interrupted (capbench/hosts/stats_tunnel.py)."""


def detect(given: str | None = None) -> str:
    """The backend given (by default the environment's BACKEND) when it is set; else the first backend (in table
    order, after the default) whose hosts are running, else the default."""
    name = (os.environ.get("BACKEND", "") if given is None else given).strip()
    if name:
        if name not in BACKENDS:
            allowed = ", ".join(list(BACKENDS)[:-1]) + " or " + list(BACKENDS)[-1]
            raise BackendError(f"BACKEND='{name}' is not allowed: use {allowed} (or leave it unset)")
        return name
    for candidate in BACKENDS:
        if candidate != DEFAULT and _class(candidate).running():
            return candidate
    return DEFAULT


def _class(name: str):
    module, _, cls = BACKENDS[name].partition(":")
    return getattr(importlib.import_module(module), cls)


def backend_class() -> type:
    """The class of the backend the environment's BACKEND names (the Makefile sets it), or of the one detect()
    finds: what it builds and installs can be asked before its hosts exist."""
    return _class(detect())


def backend() -> Backend:
    return backend_class()()
