"""The hosts of a bench and their roles, from cluster/topology.env, by the one rule written here: the shell
scripts (cluster/topology.sh) and the Vagrantfile ask it (`python3 -m capbench.hosts.topology` prints the nodes,
then the load hosts, a line each; a bad count is refused, exit 2): NODES nodes named node1 … nodeN (NODES in the environment, or the file's
default), lb, LOAD_HOSTS load hosts named load, load2 … loadN (the same way), and controller. A node's profile
keys are its name in capitals: node2's CPU quota is NODE2_CPUS."""
from __future__ import annotations

import os
import re
import sys
from pathlib import Path

from capbench.checkout import ROOT

TOPOLOGY = ROOT / "cluster" / "topology.env"
# One host each, named after its role.
SINGLE_ROLES = ("lb", "controller")


class NodesRefused(ValueError):
    """NODES or LOAD_HOSTS is not a count the bench allows."""


def _file_value(key: str, path: Path) -> str:
    for line in path.read_text().splitlines():
        if line.startswith(f"{key}="):
            return line.partition("=")[2].strip()
    raise ValueError(f"{path} has no {key}= line")


def _count(key: str, what: str, count: str | None, path: Path) -> int:
    """The count `key` sets (the argument, else the environment, else the file's default), checked."""
    text = count if count is not None else os.environ.get(key) or _file_value(key, path)
    most = int(_file_value(f"MAX_{key}", path))
    if not re.fullmatch(r"[1-9][0-9]*", text) or int(text) > most:
        raise NodesRefused(f"{key}='{text}' is not allowed: use a number of {what} from 1 to {most}")
    return int(text)


def node_names(count: str | None = None, path: Path = TOPOLOGY) -> tuple[str, ...]:
    """node1 … nodeN for NODES=N."""
    return tuple(f"node{i}" for i in range(1, _count("NODES", "nodes", count, path) + 1))


def load_host_names(count: str | None = None, path: Path = TOPOLOGY) -> tuple[str, ...]:
    """load, load2 … loadN for LOAD_HOSTS=N: the first keeps the name of the one load host."""
    return ("load", *(f"load{i}" for i in range(2, _count("LOAD_HOSTS", "load hosts", count, path) + 1)))


def _checked(names) -> tuple[str, ...]:
    try:
        return names()
    except NodesRefused as refused:  # before anything starts, as every other bad setting (exit 2)
        print(f"capbench: {refused}", file=sys.stderr)
        raise SystemExit(2) from refused


NODES: tuple[str, ...] = _checked(node_names)
LOAD_HOSTS: tuple[str, ...] = _checked(load_host_names)
HOSTS: tuple[str, ...] = (*NODES, "lb", *LOAD_HOSTS, "controller")
# The hosts whose metrics the controller logs (everything but itself).
MONITORED: tuple[str, ...] = (*NODES, "lb", *LOAD_HOSTS)
# The shared database behind the nodes: a host of the backends that run it (a backend's `database`), monitored
# there too; HOSTS above are the ones every backend runs.
DATABASE = "db"
ARCHIVED: tuple[str, ...] = (*MONITORED, DATABASE)  # the hosts a run's archives may hold


def first_nodes(count: int) -> str:
    """bench-scaleout's target of the first `count` nodes in rotation: N=1, N=2, …"""
    return f"N={count}"


# The nodes in the balancer's rotation for each target (a node alone, the cluster, all but one, the first N).
IN_ROTATION: dict[str, tuple[str, ...]] = {
    **{node: (node,) for node in NODES}, "cluster": NODES,
    # bench-failover: the nodes that carry the load while one is down
    **{f"without {n}": tuple(m for m in NODES if m != n) for n in NODES},
    **{first_nodes(k): NODES[:k] for k in range(1, len(NODES) + 1)}}


# Each node's own port on the balancer, whose requests go to that node only (haproxy/start: node1 :8101 …): a
# duet's slots are measured through them at the same time.
NODE_PORT_BASE = 8100


def node_port(node: str) -> int:
    return NODE_PORT_BASE + int(node.removeprefix("node"))


def role(host: str) -> str:
    """node, lb, load, db or controller."""
    if host == DATABASE:
        return DATABASE
    if host in NODES:
        return "node"
    if host in LOAD_HOSTS:
        return "load"
    if host in SINGLE_ROLES:
        return host
    raise KeyError(f"'{host}' is not a host of this bench: use one of {', '.join(HOSTS)}")


def profile_key(node: str, field: str) -> str:
    """The profile's key for one of a node's settings: profile_key("node2", "CPUS") == "NODE2_CPUS"."""
    return f"{node.upper()}_{field}"


if __name__ == "__main__":
    print(" ".join(NODES))
    print(" ".join(LOAD_HOSTS))
