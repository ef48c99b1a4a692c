"""bench-cluster's summary and console: E and X_cluster / X_node1, and E's caveat (capbench/analysis/efficiency.py) in
summary.json and on the console for the cluster and each balancing choice."""
from __future__ import annotations

from types import SimpleNamespace

from capbench.analysis import efficiency
from capbench.kinds.cluster import KIND
from capbench.kinds.cluster_findings import ClusterFindings


def target(capacity):
    return {"capacity_rps": capacity, "repeats": [capacity], "min_rps": capacity, "max_rps": capacity}


def test_e_and_its_caveat_in_the_summary_and_on_the_console(capsys):
    summary = {"driver": {"name": "oha"}, "targets": {"node1": target(300.0), "node2": target(275.0),
                                                        "node3": target(225.0), "cluster": target(1000.0)}}
    found = ClusterFindings()
    KIND.summarize(SimpleNamespace(balancer=SimpleNamespace(choices={}),
                                   settings=SimpleNamespace(kinds={"cluster": SimpleNamespace(weights="equal")})), summary, found)
    assert found.efficiency == 1.25 and found.cluster_over_node1 == 3.333
    assert found.efficiency_caveat == efficiency.caveat(1.25) and "superlinear" in found.efficiency_caveat
    KIND.shows.console(summary, ClusterFindings.from_json(found.to_json()))
    out = capsys.readouterr().out
    assert "E = X_cluster / ΣX_i = 1.250" in out and f"note: {efficiency.caveat(1.25)}" in out


def test_each_balancing_choice_gets_its_own_caveat(capsys):
    targets = {"node1": target(500.0), "node2": target(300.0), "node3": target(200.0),
               "cluster equal": target(450.0), "cluster weighted": target(900.0)}
    choices = {"equal": {"balance": "roundrobin", "weights": {"node1": 1, "node2": 1, "node3": 1}},
               "weighted": {"balance": "roundrobin", "weights": {"node1": 100, "node2": 60, "node3": 40}}}
    summary = {"driver": {"name": "oha"}, "targets": targets}
    found = ClusterFindings()
    KIND.summarize(SimpleNamespace(balancer=SimpleNamespace(choices=choices),
                                   settings=SimpleNamespace(kinds={"cluster": SimpleNamespace(weights="auto")})), summary, found)
    assert found.balancing["equal"].efficiency == 0.45
    assert "wastes over half" in found.balancing["equal"].efficiency_caveat
    assert found.balancing["weighted"].efficiency_caveat is None and found.efficiency_caveat is None
    KIND.shows.console(summary, ClusterFindings.from_json(found.to_json()))
    out = capsys.readouterr().out
    assert out.count("note: ") == 1 and f"    note: {efficiency.caveat(0.45)}" in out


def test_the_balance_hint_for_the_cluster_under_equal_weights(capsys):
    # Equal weights on nodes of 500, 300 and 200/s: node3 saturates first, at 600/s (E 0.6); at the cluster's
    # capacity node3 ran at 95 % of its quota, node1 at 45 %.
    at_capacity = {"node1": {"cpu_pct_of_quota": 45.0}, "node2": {"cpu_pct_of_quota": 70.0},
                   "node3": {"cpu_pct_of_quota": 95.0}}
    targets = {"node1": target(500.0), "node2": target(300.0), "node3": target(200.0),
               "cluster": {**target(580.0), "metrics_at_capacity": at_capacity}}
    choices = {"equal": {"balance": "roundrobin", "weights": {"node1": 1, "node2": 1, "node3": 1}}}
    summary = {"driver": {"name": "oha"}, "targets": targets}
    found = ClusterFindings()
    KIND.summarize(SimpleNamespace(balancer=SimpleNamespace(choices=choices),
                                   settings=SimpleNamespace(kinds={"cluster": SimpleNamespace(weights="equal")})), summary, found)
    hint = found.balance_hint
    assert hint.pace_setter == "node3" and hint.predicted_rps == 600.0 and hint.predicted_efficiency == 0.6
    assert hint.capacity_weights == {"node1": 100, "node2": 60, "node3": 40}
    KIND.shows.console(summary, ClusterFindings.from_json(found.to_json()))
    assert f"balance: {hint.text}" in capsys.readouterr().out


def bench(weights: str):
    return SimpleNamespace(balancer=SimpleNamespace(choices={}),
                           settings=SimpleNamespace(kinds={"cluster": SimpleNamespace(weights=weights)}))


def test_e_of_a_testbed_bound_cluster_is_not_the_application_s(capsys):
    # The trial: nodes alone 3800 + 2800 + 950/s, the cluster 4107/s at this machine's ceiling.
    mark = {"rule": "unsaturated", "sentence": "cluster's 4107/s is this machine's ceiling", "remedy": "BACKEND=swarm",
            "figures": {"capacity_rps": 4107.0}}
    summary = {"driver": {"name": "oha"}, "targets": {"node1": target(3800.0), "node2": target(2800.0),
                                                        "node3": target(950.0),
                                                        "cluster": {**target(4107.0), "testbed_bound": mark}},
               "testbed_ceiling": {"machine_cpus": 2, "node_quotas": {"node1": 0.5, "node2": 0.4, "node3": 0.3},
                                   "harness_ms_per_request": 0.15, "sentence": "about 5333.3/s beside the nodes"}}
    found = ClusterFindings()
    KIND.summarize(bench("equal"), summary, found)
    assert found.efficiency is None and found.cluster_over_node1 is None and found.testbed_efficiency == 0.544
    assert found.not_measured["efficiency"].startswith("not measured: cluster's 4107/s is this machine's ceiling")
    assert "ΣX_i 7550/s needs about 1.13 cores of balancer and generator, 0.8 are left" in found.not_measured["efficiency"]
    KIND.shows.console(summary, ClusterFindings.from_json(found.to_json()))
    out = capsys.readouterr().out
    assert "0.544" not in out.split("(the figures would give")[0]
    assert "E = X_cluster / ΣX_i and X_cluster / X_node1: not measured: cluster's 4107/s" in out


def test_a_node_sent_more_than_it_carries_alone_paced_the_cluster(capsys):
    # The Grinder's QUICK run: under the profile's weights 5:4:3 HAProxy sent node3 273/s, above its 237.5/s.
    servers = {"node1": {"responses_per_s": 452.0}, "node2": {"responses_per_s": 361.0},
               "node3": {"responses_per_s": 273.0}}
    summary = {"driver": {"name": "oha"}, "targets": {
        "node1": target(700.0), "node2": target(375.0), "node3": target(237.5),
        "cluster": {**target(1115.6), "metrics_at_capacity": {"lb": {"servers": servers}}}}}
    found = ClusterFindings()
    KIND.summarize(bench("equal"), summary, found)
    assert found.efficiency == 0.85 and found.over_capacity == [
        "at cluster's 1115.6/s node3 received 273.0/s, above its 237.5/s alone: it paced the cluster; weights from "
        "the capacities (WEIGHTS=auto) would give 100:54:34"]
    KIND.shows.console(summary, ClusterFindings.from_json(found.to_json()))
    assert f"balance: {found.over_capacity[0]}" in capsys.readouterr().out
