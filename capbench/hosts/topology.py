"""The hosts of a bench and their roles, from cluster/topology.env, by the one rule written here: the shell
scripts (cluster/topology.sh) and the Vagrantfile ask it (`python3 -m capbench.hosts.topology` prints the nodes,
then the load hosts, a line each; a bad count is refused, exit 2): NODES nodes named node1 … nodeN, lb,
LOAD_HOSTS load hosts named load, load2 … loadN, and controller. A node's profile keys are its name in capitals:
node2's CPU quota is NODE2_CPUS.

Nothing is read at import. A command's topology is resolved once, when first asked (current()): from the
settings the command was given (the environment capbench/commands/cli.py restarts it in, which holds only what
the user named), or adopted from what an old run recorded (a report of that run: adopt()). NODES, LOAD_HOSTS,
HOSTS, MONITORED, ARCHIVED and IN_ROTATION are the current topology's, read at each use."""
from __future__ import annotations

import os
import re
import sys
from dataclasses import dataclass
from pathlib import Path

from capbench.checkout import ROOT

TOPOLOGY = ROOT / "cluster" / "topology.env"
# One host each, named after its role.
SINGLE_ROLES = ("lb", "controller")
# The shared database behind the nodes: a host of the backends that run it (a backend's `database`), monitored
# there too; a topology's hosts are the ones every backend runs.
DATABASE = "db"


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


def first_nodes(count: int) -> str:
    """bench-scaleout's target of the first `count` nodes in rotation: N=1, N=2, …"""
    return f"N={count}"


@dataclass(frozen=True)
class Topology:
    """Which hosts a bench has: its nodes and its load hosts; the rest follows."""
    nodes: tuple[str, ...]
    load_hosts: tuple[str, ...] = ("load",)

    @classmethod
    def counted(cls, nodes: str | None = None, load_hosts: str | None = None, path: Path = TOPOLOGY) -> Topology:
        """From the counts (None: the environment's, else the file's default); NodesRefused for a bad one."""
        return cls(node_names(nodes, path), load_host_names(load_hosts, path))

    @property
    def hosts(self) -> tuple[str, ...]:
        return (*self.nodes, "lb", *self.load_hosts, "controller")

    @property
    def monitored(self) -> tuple[str, ...]:
        """The hosts whose metrics the controller logs (everything but itself)."""
        return (*self.nodes, "lb", *self.load_hosts)

    @property
    def archived(self) -> tuple[str, ...]:
        """The hosts a run's archives may hold."""
        return (*self.monitored, DATABASE)

    @property
    def in_rotation(self) -> dict[str, tuple[str, ...]]:
        """The nodes in the balancer's rotation for each target (a node alone, the cluster, all but one, the
        first N)."""
        nodes = self.nodes
        return {**{node: (node,) for node in nodes}, "cluster": nodes,
                # bench-failover: the nodes that carry the load while one is down
                **{f"without {n}": tuple(m for m in nodes if m != n) for n in nodes},
                **{first_nodes(k): nodes[:k] for k in range(1, len(nodes) + 1)}}

    def role(self, host: str) -> str:
        """node, lb, load, db or controller."""
        if host == DATABASE:
            return DATABASE
        if host in self.nodes:
            return "node"
        if host in self.load_hosts:
            return "load"
        if host in SINGLE_ROLES:
            return host
        raise KeyError(f"'{host}' is not a host of this bench: use one of {', '.join(self.hosts)}")


_current: Topology | None = None


def current() -> Topology:
    """This command's topology: adopted, else resolved once from the settings it runs with. A bad count is
    refused as every other bad setting (exit 2)."""
    global _current
    if _current is None:
        try:
            _current = Topology.counted()
        except NodesRefused as refused:
            print(f"capbench: {refused}", file=sys.stderr)
            raise SystemExit(2) from refused
    return _current


def adopt(topology: Topology | None) -> None:
    """Make `topology` this command's (a report takes an old run's); None forgets it, to be resolved again."""
    global _current
    _current = topology


_CURRENT_FIELDS = {"NODES": "nodes", "LOAD_HOSTS": "load_hosts", "HOSTS": "hosts", "MONITORED": "monitored",
                   "ARCHIVED": "archived", "IN_ROTATION": "in_rotation"}


def __getattr__(name: str):
    """topology.NODES and the rest: the current topology's, at each use (PEP 562)."""
    if name in _CURRENT_FIELDS:
        return getattr(current(), _CURRENT_FIELDS[name])
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def role(host: str) -> str:
    """The current topology's role of `host`: node, lb, load, db or controller."""
    return current().role(host)


# Each node's own port on the balancer, whose requests go to that node only (haproxy/start: node1 :8101 …): a
# duet's slots are measured through them at the same time.
NODE_PORT_BASE = 8100


def node_port(node: str) -> int:
    return NODE_PORT_BASE + int(node.removeprefix("node"))


def profile_key(node: str, field: str) -> str:
    """The profile's key for one of a node's settings: profile_key("node2", "CPUS") == "NODE2_CPUS"."""
    return f"{node.upper()}_{field}"


if __name__ == "__main__":
    print(" ".join(current().nodes))
    print(" ".join(current().load_hosts))
