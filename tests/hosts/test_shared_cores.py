"""Which hosts share one machine's cores: those under one kernel (its boot id)."""
from __future__ import annotations

from capbench.hosts import shared_cores

LAB = "5c8f0f3e-0d4b-4f7e-9d2b-1f7a3c2e9b10"


def test_the_read_gives_the_boot_id_and_the_cpus():
    assert shared_cores.parse(f"{LAB}\n2\n") == (LAB, 2.0)
    assert shared_cores.parse("sh: getconf: not found\n") is None
    assert shared_cores.parse(f"{LAB}\n") is None


def test_engines_under_one_kernel_are_one_machine():
    """The swarm lab: seven engines, containers on this machine, one boot id."""
    hosts = ("node1", "node2", "node3", "lb", "load", "controller")
    names = {"node1": "lab2", "node2": "lab3", "node3": "lab4", "lb": "lab7", "load": "lab6", "controller": "lab1"}
    found = shared_cores.group({h: (LAB, 2.0) for h in hosts}, names)
    assert len(found) == 1 and found[0].hosts == hosts and found[0].cpus == 2.0
    assert found[0].name == "the machine under lab2, lab3, lab4, lab7, lab6, lab1"


def test_machines_of_their_own_are_apart():
    read = {"node1": ("a", 1.0), "node2": ("a", 1.0), "lb": ("b", 4.0), "load": ("c", 8.0)}
    found = shared_cores.group(read, {"node1": "m1", "node2": "m1", "lb": "m2", "load": "m3"})
    assert [(m.name, m.cpus, m.hosts) for m in found] == [("m1", 1.0, ("node1", "node2")), ("m2", 4.0, ("lb",)),
                                                          ("m3", 8.0, ("load",))]
