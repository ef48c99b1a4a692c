"""The hosts of a bench and their roles, from cluster/topology.env (the one list: the shell scripts, the
Makefile and the Vagrantfile read the same file). A node's profile keys are its name in capitals: node2's CPU
quota is NODE2_CPUS."""
from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent  # the capbench checkout
TOPOLOGY = ROOT / "cluster" / "topology.env"
# One host each, named after its role.
SINGLE_ROLES = ("lb", "load", "controller")


def _nodes(path: Path = TOPOLOGY) -> tuple[str, ...]:
    for line in path.read_text().splitlines():
        if line.startswith("NODES="):
            return tuple(line.partition("=")[2].split())
    raise ValueError(f"{path} has no NODES= line")


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
