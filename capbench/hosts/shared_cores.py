"""Which hosts of the bench share one machine's cores, and how many it has: the testbed's ceiling
(capbench/analysis/testbed_ceiling.py) counts the cores the nodes' quotas leave on each machine that runs the balancer or a
load host.

Hosts share cores where they share a kernel, and a kernel names itself: its boot id (/proc/sys/kernel/random/boot_id,
the same in every container on it, a new one at each boot). So the swarm lab's engines, containers on this machine,
are one machine however many engines the hosts file names, and a swarm of real machines is as many as it has.
Compose's hosts are all on this machine. VMs each have a kernel of their own but may share the host's cores (the
Vagrantfile's run under emulation here), which no kernel tells: there the cores are not counted (None)."""
from __future__ import annotations

import os
from dataclasses import dataclass

from capbench.hosts import topology
from capbench.hosts.backend import ClusterError, backend

READ = "cat /proc/sys/kernel/random/boot_id; getconf _NPROCESSORS_ONLN"


@dataclass(frozen=True)
class SharedMachine:
    """A kernel's cores and the bench's hosts that run on it; `name` as the user knows it."""
    name: str
    cpus: float
    hosts: tuple[str, ...]

    def as_json(self) -> dict:
        return {"name": self.name, "cpus": self.cpus, "hosts": list(self.hosts)}


def parse(text: str) -> tuple[str, float] | None:
    """The boot id and the online CPUs in READ's output; None when it is not that."""
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    if len(lines) != 2 or not lines[1].isdigit():
        return None
    return lines[0], float(lines[1])


def group(read: dict[str, tuple[str, float]], names: dict[str, str]) -> list[SharedMachine]:
    """Hosts by kernel (`read`: host → boot id and CPUs), each machine named by its hosts' machine names (`names`:
    host → the hosts file's machine), in the order the hosts come."""
    kernels: dict[str, list[str]] = {}
    for host, (boot_id, _) in read.items():
        kernels.setdefault(boot_id, []).append(host)
    machines = []
    for boot_id, hosts in kernels.items():
        labels = list(dict.fromkeys(names.get(h, h) for h in hosts))
        name = labels[0] if len(labels) == 1 else f"the machine under {', '.join(labels)}"
        machines.append(SharedMachine(name, read[hosts[0]][1], tuple(hosts)))
    return machines


def machines() -> list[SharedMachine] | None:
    """The machines the bench's hosts run on, or None where their cores cannot be counted (VMs; a host that did
    not answer)."""
    current = backend()
    if current.name == "compose":
        return [SharedMachine("this machine", float(os.cpu_count() or 1), topology.HOSTS)]
    if current.name != "swarm":
        return None
    read = {}
    for host in topology.HOSTS:
        try:
            done = current.exec(host, ["sh", "-c", READ], check=False, timeout=30)
        except ClusterError:
            return None
        found = parse(done.stdout.decode(errors="replace"))
        if found is None:
            return None
        read[host] = found
    return group(read, {host: current.hosts.machine_of(host).name for host in topology.HOSTS})
