"""The hosts of a bench and their roles, from cluster/topology.env (the one place: the shell scripts and the
Vagrantfile read the same file): NODES nodes named node1 … nodeN (NODES in the environment, or the file's
default), then lb, load and controller. A node's profile keys are its name in capitals: node2's CPU quota is
NODE2_CPUS."""
from __future__ import annotations

import os
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent  # the capbench checkout
TOPOLOGY = ROOT / "cluster" / "topology.env"
# One host each, named after its role.
SINGLE_ROLES = ("lb", "load", "controller")


class NodesRefused(ValueError):
    """NODES is not a number of nodes the bench allows."""


def _file_value(key: str, path: Path) -> str:
    for line in path.read_text().splitlines():
        if line.startswith(f"{key}="):
            return line.partition("=")[2].strip()
    raise ValueError(f"{path} has no {key}= line")


def node_names(count: str | None = None, path: Path = TOPOLOGY) -> tuple[str, ...]:
    """node1 … nodeN for NODES=N (the argument, else the environment, else the file's default)."""
    text = count if count is not None else os.environ.get("NODES") or _file_value("NODES", path)
    most = int(_file_value("MAX_NODES", path))
    if not re.fullmatch(r"[1-9][0-9]*", text) or int(text) > most:
        raise NodesRefused(f"NODES='{text}' is not allowed: use a number of nodes from 1 to {most}")
    return tuple(f"node{i}" for i in range(1, int(text) + 1))


def _nodes() -> tuple[str, ...]:
    try:
        return node_names()
    except NodesRefused as refused:  # before anything starts, as every other bad setting (exit 2)
        print(f"capbench: {refused}", file=sys.stderr)
        raise SystemExit(2) from refused


NODES: tuple[str, ...] = _nodes()
HOSTS: tuple[str, ...] = (*NODES, *SINGLE_ROLES)
# The hosts whose metrics the controller logs (everything but itself).
MONITORED: tuple[str, ...] = (*NODES, "lb", "load")


def role(host: str) -> str:
    """node, lb, load or controller."""
    if host in NODES:
        return "node"
    if host in SINGLE_ROLES:
        return host
    raise KeyError(f"'{host}' is not a host of this bench: use one of {', '.join(HOSTS)}")


def profile_key(node: str, field: str) -> str:
    """The profile's key for one of a node's settings: profile_key("node2", "CPUS") == "NODE2_CPUS"."""
    return f"{node.upper()}_{field}"
