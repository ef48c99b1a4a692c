"""The Swarm backend's hosts file: every role on exactly one machine, engines the docker CLI can reach, and every
mistake named with its line and what is allowed, before anything is asked of a machine; a machine whose engine
does not answer is lost, with every role it ran (capbench/hosts/swarm_machines.py)."""
from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from capbench.hosts import topology
from capbench.hosts.swarm_hosts import HostsFileError, parse
from capbench.hosts.swarm_lab import roles_for
from capbench.hosts.topology import HOSTS, NODES, ROOT, NodesRefused, load_host_names, role

SOURCE = Path("hosts")


def test_a_file_with_every_role_places_each_and_names_the_manager():
    hosts = parse("# machine engine roles\n"
                  "m1 unix:///var/run/docker.sock controller lb load   # the manager\n"
                  "\n"
                  "m2 ssh://capbench@10.0.0.2 node1 node2\n"
                  "m3 tcp://10.0.0.3:2376 node3\n", SOURCE)
    assert hosts.manager.name == "m1"
    assert [hosts.machine_of(node).name for node in NODES] == ["m2", "m2", "m3"]
    assert hosts.machine_of("lb").engine == "unix:///var/run/docker.sock"
    assert hosts.machine_named("m3").roles == ("node3",)
    assert not hosts.database and hosts.roles == HOSTS  # no db role: no database on this swarm
    with_db = parse("m1 unix:///s controller lb load db\nm2 unix:///t node1 node2 node3\n", SOURCE)
    assert with_db.database and with_db.machine_of("db").name == "m1" and with_db.roles == (*HOSTS, "db")


@pytest.mark.parametrize("text, message", [
    ("m1 unix:///s controller lb load node1 node2\n", "hosts: no machine plays node3 (every role on exactly one"),
    ("m1 unix:///s controller lb load node1 node2 node3\nm2 unix:///t node1\n",
     "hosts:2: role 'node1' is already on machine 'm1'"),
    ("m1 unix:///s controller lb load node1 node2 node3 node4\n",
     "hosts:1: role 'node4' is not a host of this bench: use node1, node2, node3, lb, load, controller or db"),
    ("m1 unix:///s controller lb load node1 node2 node3 db\nm2 unix:///t db\n",
     "hosts:2: role 'db' is already on machine 'm1'"),
    ("m1 http://x controller lb load node1 node2 node3\n",
     "hosts:1: engine 'http://x' must start with unix://, ssh://, tcp://"),
    ("m1 unix:///s\n", "hosts:1: 'm1 unix:///s' needs a machine, an engine and at least one role"),
    ("m1 unix:///s controller lb load\nm1 unix:///t node1 node2 node3\n", "hosts:2: machine 'm1' is listed twice"),
    ("m/1 unix:///s controller lb load node1 node2 node3\n", "hosts:1: machine 'm/1' is not a hostname"),
])
def test_mistakes_are_named_with_their_line(text, message):
    with pytest.raises(HostsFileError) as refused:
        parse(text, SOURCE)
    assert message in str(refused.value)


@pytest.mark.parametrize("engines", range(1, 9))
def test_the_lab_places_every_role_once_and_each_node_on_its_own_engine_while_there_are_engines(engines):
    plan = roles_for(engines)
    assert len(plan) == engines
    assert sorted(role for roles in plan for role in roles) == sorted((*HOSTS, "db"))
    assert "controller" in plan[0]
    assert plan[len(NODES) + 1 if engines > len(NODES) + 1 else 0].count("db") == 1  # its own engine once spare
    node_engines = [next(i for i, roles in enumerate(plan) if node in roles) for node in NODES]
    assert len(set(node_engines)) == min(len(NODES), max(engines - 1, 1))
    if engines > 1:
        assert 0 not in node_engines  # the nodes never share the manager's engine when there is another


@pytest.mark.parametrize("engines", range(2, 9))
def test_the_lab_puts_two_load_hosts_on_two_engines(engines, monkeypatch):
    monkeypatch.setattr(topology, "_current", topology.Topology(NODES, ("load", "load2")))
    plan = roles_for(engines)
    placed = [next(i for i, roles in enumerate(plan) if load in roles) for load in ("load", "load2")]
    assert placed[0] != placed[1], plan
    assert sum(len(roles) for roles in plan) == len(HOSTS) + 2  # every role once, load2 and db among them


def test_load_hosts_are_named_after_the_first_and_have_its_role():
    assert load_host_names("1") == ("load",)
    assert load_host_names("3") == ("load", "load2", "load3")
    for refused in ("0", "9", "x", "02"):
        with pytest.raises(NodesRefused, match=f"LOAD_HOSTS='{refused}' is not allowed"):
            load_host_names(refused)
    assert role("load") == "load"


def test_the_example_for_real_machines_is_a_valid_hosts_file():
    example = ROOT / "cluster" / "swarm-hosts.example"
    hosts = parse(example.read_text(), example)
    assert hosts.manager.name == "manager" and {m.name for m in hosts.machines if set(m.roles) & set(NODES)} == \
        {"worker1", "worker2", "worker3"}


@pytest.mark.skipif(shutil.which("docker") is None, reason="no docker CLI (make setup installs it)")
def test_a_machine_whose_engine_does_not_answer_is_lost_with_every_role_it_ran(tmp_path):
    from capbench.hosts import swarm_machines
    gone = f"unix://{tmp_path}/lab3/docker.sock"  # a killed lab engine: no one listens there
    hosts = parse(f"lab1 {gone}0 controller lb load\nlab2 {gone}1 node1\n"
                  f"lab3 {gone} node2 node3\n", tmp_path / "hosts")
    [lost] = swarm_machines.lost(hosts, ("node3",))
    assert (lost.machine, lost.roles) == ("lab3", ("node2", "node3"))
    assert lost.seen.startswith(f"its engine {gone} did not answer (") and "docker.sock" in lost.seen
    assert swarm_machines.lost(hosts, ("lb", "controller")) and not swarm_machines.lost(hosts, ())
