"""The Swarm backend's hosts file: which machine of the swarm plays which roles, and how the harness reaches
each machine's Docker engine. One line per machine:

    # machine   engine                               roles
    manager     unix:///var/run/docker.sock          controller lb load
    worker1     ssh://capbench@10.0.0.11             node1

`machine` is the swarm node's hostname (`docker node ls`), `engine` a DOCKER_HOST the docker CLI accepts
(unix://, ssh:// or tcp:// with TLS set up by the user), `roles` the hosts of cluster/topology.env it runs, and
`db` for the shared database (optional: without it the stack runs no database and the nodes answer /query 503).
Every role on exactly one machine; a machine may run several. The first machine is the swarm's manager, where
the stack is deployed. SWARM_HOSTS names the file (default .capbench/swarm/hosts, which `make swarm-lab`
writes; cluster/swarm/hosts.example is the one to copy for real machines)."""
from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

from capbench.hosts import topology
from capbench.hosts.backend import BackendError
from capbench.hosts.topology import DATABASE, ROOT

DEFAULT = ROOT / ".capbench" / "swarm" / "hosts"
ENGINE_SCHEMES = ("unix://", "ssh://", "tcp://")
MACHINE_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,62}$")


class HostsFileError(BackendError):
    """The hosts file is missing or wrong: every problem, with what is allowed."""


@dataclass(frozen=True)
class Machine:
    name: str
    engine: str
    roles: tuple[str, ...]


@dataclass(frozen=True)
class SwarmHosts:
    machines: tuple[Machine, ...]
    path: Path

    @property
    def manager(self) -> Machine:
        return self.machines[0]

    def machine_of(self, role: str) -> Machine:
        return next(m for m in self.machines if role in m.roles)

    @property
    def database(self) -> bool:
        """Whether a machine runs the shared database."""
        return any(DATABASE in m.roles for m in self.machines)

    @property
    def roles(self) -> tuple[str, ...]:
        """Every role a machine runs: the topology's hosts, and the database where placed."""
        return (*topology.HOSTS, *([DATABASE] if self.database else []))

    def machine_named(self, name: str) -> Machine | None:
        return next((m for m in self.machines if m.name == name), None)


def path() -> Path:
    return Path(os.environ.get("SWARM_HOSTS") or DEFAULT)


def parse(text: str, source: Path) -> SwarmHosts:
    problems: list[str] = []
    machines: list[Machine] = []
    placed: dict[str, str] = {}
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.split("#", 1)[0].split()
        if not line:
            continue
        where = f"{source}:{number}"
        if len(line) < 3:
            problems.append(f"{where}: '{raw.strip()}' needs a machine, an engine and at least one role")
            continue
        name, engine, roles = line[0], line[1], tuple(line[2:])
        if not MACHINE_NAME.match(name):
            problems.append(f"{where}: machine '{name}' is not a hostname (letters, digits, . _ -)")
        if any(m.name == name for m in machines):
            problems.append(f"{where}: machine '{name}' is listed twice")
        if not engine.startswith(ENGINE_SCHEMES):
            problems.append(f"{where}: engine '{engine}' must start with {', '.join(ENGINE_SCHEMES)}")
        for role in roles:
            if role not in (*topology.HOSTS, DATABASE):
                problems.append(f"{where}: role '{role}' is not a host of this bench: use {', '.join(topology.HOSTS)} "
                                f"or {DATABASE}")
            elif role in placed:
                problems.append(f"{where}: role '{role}' is already on machine '{placed[role]}'")
            else:
                placed[role] = name
        machines.append(Machine(name, engine, roles))
    missing = [role for role in topology.HOSTS if role not in placed]
    if missing:
        problems.append(f"{source}: no machine plays {', '.join(missing)} (every role on exactly one machine)")
    if problems:
        raise HostsFileError("\n".join(problems))
    return SwarmHosts(tuple(machines), source)


def load() -> SwarmHosts:
    file = path()
    if not file.is_file():
        raise HostsFileError(f"no Swarm hosts file at {file}: `make swarm-lab` writes one for a lab on this "
                             f"machine; for real machines copy cluster/swarm/hosts.example there (or set "
                             f"SWARM_HOSTS=FILE) and name your machines")
    return parse(file.read_text(), file)
