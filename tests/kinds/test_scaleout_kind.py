"""bench-scaleout's rounds, summary and console: X(N), the ideal (N·X(1) for nodes alike, ΣX_i of the nodes
measured alone otherwise), E(N), the harness's CPU at each point, a point the balancer limited left out of the fit
with its reason, and the report's figure from that summary."""
from __future__ import annotations

import json
from types import SimpleNamespace

import pytest

from capbench.analysis import scaling
from capbench.hosts import topology
from capbench.kinds import scaleout as kind
from capbench.kinds.scaleout import KIND, curve, next_guess
from capbench.report import build
from capbench.rundata.records import LoadHostUsage
from capbench.rundata.summary import Summary
from step_records import a_step


def target(repeats, lb_cores=0.2, busy=60.0):
    return {"capacity_rps": sorted(repeats)[len(repeats) // 2], "repeats": repeats, "min_rps": min(repeats),
            "max_rps": max(repeats), "metrics_at_capacity": {"step": 1, "lb": {"haproxy_cpu_cores": lb_cores},
                                                            "load": {"machine_cpu_busy_pct": busy}}}


def summarized(summary: dict, steps) -> dict:
    """summary.json as the run writes it: the kind's findings under its name."""
    found = kind.ScaleoutFindings()
    KIND.summarize(SimpleNamespace(paths=SimpleNamespace(steps=steps)), summary, found)
    return {**summary, "scaleout": found.to_json()}


def test_points_e_and_a_balancer_bound_point_left_out(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(kind.Scaleout, "alone", staticmethod(lambda: ()))  # nodes alike: the ideal N·X(1)
    steps = tmp_path / "steps.jsonl"
    usage = LoadHostUsage(cpu_seconds=3.1, wall_seconds=10.0, cpus_available=1.0)  # 31 % of its CPU
    steps.write_text(json.dumps(a_step(1, curve()[0], 500.0, label=curve()[0], loadhost=usage).to_json()) + "\n")
    caps = {1: [490.0, 500.0, 510.0], 2: [960.0, 980.0, 1000.0], 3: [1300.0, 1350.0, 1400.0]}
    summary = {"driver": {"name": "oha"},
               "targets": {t: target(caps[k], lb_cores=0.95 if k == 3 else 0.2) for k, t in enumerate(curve(), 1)}}
    summary = summarized(summary, steps)
    points = summary["scaleout"]["points"]
    assert [(p["n"], p["capacity_rps"], p["ideal_rps"], p["efficiency"]) for p in points] == \
        [(1, 500.0, 500.0, 1.0), (2, 980.0, 1000.0, 0.98), (3, 1350.0, 1500.0, 0.9)]
    assert points[0]["generator_cpu_pct"] == 31.0 and points[0]["machine_idle_pct"] == 40.0
    assert points[2]["limited_by"].startswith("the balancer used 95 % of a core")
    # Two points the harness did not limit cannot carry a three-parameter fit: said, not faked.
    assert summary["scaleout"]["fit"]["left_out"] == [{"n": 3, "reason": points[2]["limited_by"]}]
    assert "too few points" in summary["scaleout"]["fit"]["error"]
    KIND.shows.console(summary, KIND.found_in(summary))
    out = capsys.readouterr().out
    assert "left out: the balancer used 95 %" in out and "USL over N: no fit: too few points" in out
    section = build.usl_section(Summary.from_json({**summary, "run_id": "r", "kind": "scaleout", "status": "complete"}),
                                KIND.shows.section)
    assert section["what"] == "nodes in rotation" and len(section["points"]) == 6 and section["fit"] is None


def test_nodes_that_differ_have_the_sum_of_each_alone_for_ideal(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(kind.Scaleout, "alone", staticmethod(lambda: ("node2", "node3")))
    steps = tmp_path / "steps.jsonl"
    steps.write_text("")
    caps = {1: [500.0], 2: [810.0], 3: [1080.0]}
    summary = {"driver": {"name": "oha"},
               "targets": {**{t: target(caps[k]) for k, t in enumerate(curve(), 1)},
                           "node2": target([400.0]), "node3": target([300.0])}}
    summary = summarized(summary, steps)
    points = summary["scaleout"]["points"]
    assert [(p["ideal_rps"], p["efficiency"], p["ideal_basis"]) for p in points] == \
        [(500.0, 1.0, "ΣX_i"), (900.0, 0.9, "ΣX_i"), (1200.0, 0.9, "ΣX_i")]
    KIND.shows.console(summary, KIND.found_in(summary))
    assert "ideal: ΣX_i" in capsys.readouterr().out


class FakeBench:
    """Records each search bench-scaleout asks for; every N has capacity 400·N^0.8 and a node alone 300."""

    def __init__(self, repeats: int):
        self.settings = SimpleNamespace(repeats=repeats)
        self.found: dict[str, list[float]] = {}
        self.asked: list[tuple[str, float | None]] = []

    def search(self, target, repeats=None, estimate=None):
        assert repeats == 1
        self.asked.append((target, estimate))
        n = int(target[2:]) if target.startswith("N=") else None
        self.found.setdefault(target, []).append(round(400 * n ** 0.8, 1) if n else 300.0)

    def capacity(self, target):
        found = self.found.get(target)
        return sorted(found)[len(found) // 2] if found else None


def test_rounds_measure_every_n_then_the_nodes_alone_starting_each_n_near_its_guess(monkeypatch):
    monkeypatch.setattr(kind.Scaleout, "alone", staticmethod(lambda: ("node2", "node3")))
    monkeypatch.setattr(topology, "_current", topology.Topology(("node1", "node2", "node3")))
    bench = FakeBench(repeats=2)
    KIND.run(bench, kind.ScaleoutFindings())
    assert [t for t, _ in bench.asked] == ["N=1", "N=2", "N=3", "node2", "node3"] * 2
    first_round = dict(bench.asked[:3])
    # N=2 starts from twice X(1), N=3 from X(2) plus the second node's gain; the second round from the first's.
    assert first_round == {"N=1": None, "N=2": 800.0, "N=3": pytest.approx(696.4 + 296.4)}
    assert dict(bench.asked[5:8]) == {"N=1": 400.0, "N=2": 696.4, "N=3": 963.3}


@pytest.mark.parametrize("found, guess", [([], None), ([500.0], 1000.0), ([500.0, 800.0], 1100.0),
                                          ([500.0, 800.0, 700.0], 700.0)])
def test_next_guess_adds_the_last_nodes_gain_never_less_than_the_last(found, guess):
    assert next_guess(found) == guess


def settings_of(**nodes):
    return {f"NODE{i}_{field}": value for i, fields in nodes.items() for field, value in fields.items()}


@pytest.mark.parametrize("nodes, alike", [
    ({1: {"CPUS": "0.3", "MEM": "512m", "HEAP": "256m", "GC": "G1", "MAXCONN": "100", "WEIGHT": "1"},
      2: {"CPUS": "0.3", "MEM": "512m", "HEAP": "256m", "GC": "G1", "MAXCONN": "100", "WEIGHT": "3"}}, True),
    ({1: {"CPUS": "0.6", "MEM": "512m"}, 2: {"CPUS": "0.3", "MEM": "512m"}}, False),
    ({1: {"CPUS": "0.3", "HEAP": "256m"}, 2: {"CPUS": "0.3", "HEAP": "128m"}}, False),
    ({1: {"CPUS": "0", "MEM": "2g"}, 2: {"CPUS": "0", "MEM": "2g"}}, False),  # no quota: each its own machine
])
def test_nodes_are_alike_with_the_same_capacity_settings_and_a_quota_each(nodes, alike):
    assert scaling.nodes_alike(settings_of(**{str(k): v for k, v in nodes.items()}), ("node1", "node2")) is alike
