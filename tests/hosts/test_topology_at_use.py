"""Nothing reads the topology at import: a command's topology is resolved when first used, from the settings
the command runs with, or adopted from an old run's record (capbench/hosts/topology.py)."""
import json
import subprocess
import sys

import pytest

from capbench.hosts import topology
from capbench.hosts.topology import Topology


def test_importing_every_module_resolves_no_topology(monkeypatch):
    monkeypatch.setenv("NODES", "not a count")  # were it read at import, an import would exit 2
    code = ("import pkgutil, importlib, capbench\n"
            "from capbench.hosts import topology\n"
            "names = [m.name for m in pkgutil.walk_packages(capbench.__path__, 'capbench.') "
            "if not m.name.endswith('__main__')]\n"
            "for name in names: importlib.import_module(name)\n"
            "assert topology._current is None, topology._current\n"
            "print(len(names))\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert int(done.stdout) > 100  # every module was imported


def test_the_current_topology_is_resolved_once_from_the_settings(monkeypatch):
    monkeypatch.setattr(topology, "_current", None)
    monkeypatch.setenv("NODES", "2")
    monkeypatch.setenv("LOAD_HOSTS", "2")
    assert topology.NODES == ("node1", "node2")
    assert topology.HOSTS == ("node1", "node2", "lb", "load", "load2", "controller")
    monkeypatch.setenv("NODES", "4")  # resolved already: the command keeps the topology it began with
    assert topology.NODES == ("node1", "node2")
    assert topology.IN_ROTATION["without node1"] == ("node2",)


def test_an_adopted_topology_is_the_one_used(monkeypatch):
    monkeypatch.setattr(topology, "_current", None)
    topology.adopt(Topology(("node1", "node2", "node3", "node4", "node5")))
    assert topology.NODES[-1] == "node5"
    assert topology.role("node5") == "node"
    assert topology.ARCHIVED == ("node1", "node2", "node3", "node4", "node5", "lb", "load", "db")
    with pytest.raises(KeyError, match="not a host of this bench"):
        topology.role("node6")


def test_a_bad_count_is_refused_when_first_used(monkeypatch, capsys):
    monkeypatch.setattr(topology, "_current", None)
    monkeypatch.setenv("NODES", "0")
    with pytest.raises(SystemExit) as ended:
        topology.current()
    assert ended.value.code == 2
    assert "NODES='0' is not allowed: use a number of nodes from 1 to" in capsys.readouterr().err


def test_an_unknown_name_is_still_an_attribute_error():
    with pytest.raises(AttributeError):
        topology.NODE  # noqa: B018



def test_a_report_of_an_old_run_takes_the_hosts_that_run_recorded(monkeypatch, tmp_path):
    from capbench.commands import report

    monkeypatch.setattr(topology, "_current", Topology(("node1", "node2", "node3")))  # today's
    (tmp_path / "run.json").write_text(json.dumps({"kind": "cluster", "nodes": {"node1": {}, "node2": {}},
                                                   "load_hosts": {"load": "oha 1", "load2": "oha 1"}}))
    section = report.section_of(tmp_path)
    assert section is not None
    assert topology.NODES == ("node1", "node2") and topology.LOAD_HOSTS == ("load", "load2")
    assert report.KINDS["cluster"].targets == ("node1", "node2", "cluster")
