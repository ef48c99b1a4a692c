"""make tune's sweep: read from the make line or a sweep file, every bad shape refused with what is allowed,
the baseline found or added, weights resolved. (The values themselves go through cluster/settings.sh:
tests/config/test_tune_points.py.)"""
import os

import pytest

from capbench.commands import sweep as tune
from capbench.commands.sweep import SweepError, read_sweep, resolve
from capbench.rundata import jsonl
from conftest import ROOT

BASE = {"TOMCAT_MAX_THREADS": "200", "TOMCAT_PROTOCOL": "nio", "LB_BALANCE": "roundrobin", "NODE1_WEIGHT": "5",
        "NODE2_WEIGHT": "4", "NODE3_WEIGHT": "3", "NODE1_MAXCONN": "0", "NODE2_MAXCONN": "0", "NODE3_MAXCONN": "0"}


def test_one_parameter_from_the_make_line_on_node1_with_the_default_as_baseline():
    sweep = read_sweep({"MAXTHREADS": "4,16,64,200"})
    resolve(sweep, BASE)
    assert sweep.target == "node1" and sweep.parameters == ["MAXTHREADS"]
    assert [p.label for p in sweep.points] == ["MAXTHREADS=4", "MAXTHREADS=16", "MAXTHREADS=64", "MAXTHREADS=200"]
    assert [p.baseline for p in sweep.points] == [False, False, False, True]
    assert sweep.points[0].env == {"TOMCAT_MAX_THREADS": "4"}


def test_rounds_default_to_three_and_each_round_draws_its_own_order_again_for_the_same_run():
    from capbench.analysis.rounds import draw_orders
    assert read_sweep({"MAXTHREADS": "4,16"}).rounds == 3 and read_sweep({"MAXTHREADS": "4", "TUNE_ROUNDS": "1"}).rounds == 1
    orders = draw_orders(4, 5, "20261126T180000Z-abc-tune")
    assert len(orders) == 5 and all(sorted(order) == [1, 2, 3, 4] for order in orders)
    assert len({tuple(order) for order in orders}) > 1  # not one order repeated: 5 draws of 24 alike 1 in 13 824
    assert draw_orders(4, 5, "20261126T180000Z-abc-tune") == orders  # a resumed run finds its own order


def test_a_grid_without_the_defaults_gets_a_baseline_point_first():
    sweep = read_sweep({"MAXTHREADS": "4,16", "PROTOCOL": "nio,nio2"})
    resolve(sweep, BASE)
    # On the make line the parameters come in the order of capbench/commands/sweep.py's PARAMETERS.
    assert [p.label for p in sweep.points] == ["baseline", "PROTOCOL=nio MAXTHREADS=4", "PROTOCOL=nio MAXTHREADS=16",
                                               "PROTOCOL=nio2 MAXTHREADS=4", "PROTOCOL=nio2 MAXTHREADS=16"]
    assert sweep.points[0].baseline and sweep.points[0].env == {}


def test_balancer_settings_make_the_cluster_the_target_and_weights_resolve():
    sweep = read_sweep({"BALANCE": "roundrobin,leastconn", "NODEWEIGHTS": "equal,profile,9:3:1", "SERVERMAXCONN": "8"})
    resolve(sweep, BASE)
    assert sweep.target == "cluster"
    envs = {p.label: p.env for p in sweep.points}
    assert envs["BALANCE=leastconn NODEWEIGHTS=equal SERVERMAXCONN=8"] == {
        "LB_BALANCE": "leastconn", "NODE1_WEIGHT": "1", "NODE2_WEIGHT": "1", "NODE3_WEIGHT": "1",
        "NODE1_MAXCONN": "8", "NODE2_MAXCONN": "8", "NODE3_MAXCONN": "8"}
    assert envs["BALANCE=roundrobin NODEWEIGHTS=9:3:1 SERVERMAXCONN=8"]["NODE1_WEIGHT"] == "9"
    assert envs["BALANCE=roundrobin NODEWEIGHTS=profile SERVERMAXCONN=8"]["NODE2_WEIGHT"] == "4"


def test_capacity_weights_come_from_the_last_complete_cluster_run(tmp_path, monkeypatch):
    monkeypatch.setenv("RESULTS_DIR", str(tmp_path))
    with pytest.raises(SweepError, match="needs the node capacities of a complete make bench-cluster"):
        tune.weights_for("capacity", BASE)
    line = {"kind": "cluster", "status": "complete", "capacities": {"node1": 600, "node2": 300, "node3": 150}}
    jsonl.append(tmp_path / "history.jsonl", line)
    jsonl.append(tmp_path / "history.jsonl", {**line, "status": "partial", "capacities": {"node1": 1.0}})
    assert tune.weights_for("capacity", BASE) == {"NODE1_WEIGHT": "100", "NODE2_WEIGHT": "50", "NODE3_WEIGHT": "25"}


def test_sweep_files_grid_and_points(tmp_path):
    grid = tmp_path / "grid.yaml"
    grid.write_text("target: node1\ngrid:\n  maxthreads: [4, 200]\n  PROTOCOL: [nio2]\n")
    sweep = read_sweep({"SWEEP": str(grid)})
    assert [p.values for p in sweep.points] == [{"MAXTHREADS": "4", "PROTOCOL": "nio2"},
                                                {"MAXTHREADS": "200", "PROTOCOL": "nio2"}]
    listed = tmp_path / "points.yaml"
    listed.write_text("points:\n  - {MAXTHREADS: 8, ACCEPTCOUNT: 10}\n  - {BALANCE: leastconn}\n")
    sweep = read_sweep({"SWEEP": str(listed)})
    assert sweep.target == "cluster" and sweep.parameters == ["MAXTHREADS", "ACCEPTCOUNT", "BALANCE"]
    assert [p.label for p in sweep.points] == ["MAXTHREADS=8 ACCEPTCOUNT=10", "BALANCE=leastconn"]


def test_the_shipped_sweep_files_read():
    for name in ("threads", "connector", "balancer"):
        sweep = read_sweep({"SWEEP": str(ROOT / "sweeps" / f"{name}.yaml")})
        resolve(sweep, BASE)
        assert len(sweep.points) >= 4


@pytest.mark.parametrize("environ, message", [
    ({}, "nothing to sweep: give SWEEP=<file.yaml> or one or more of PROTOCOL=a,b,..."),
    ({"MAXTHREADS": "4,4"}, "MAXTHREADS='4,4' is not allowed: use distinct, comma-separated values"),
    ({"MAXTHREADS": "4,,8"}, "MAXTHREADS='4,,8' is not allowed"),
    ({"MAXTHREADS": "4", "SWEEP": "x.yaml"}, "give SWEEP=x.yaml or parameters on the make line (MAXTHREADS), not both"),
    ({"SWEEP": "/nonexistent.yaml"}, "SWEEP='/nonexistent.yaml' is not a file"),
    ({"MAXTHREADS": "4", "TUNE_TARGET": "node7"}, "TUNE_TARGET='node7' is not allowed: use one of node1, cluster"),
    ({"BALANCE": "leastconn", "TUNE_TARGET": "node1"}, "balancer settings (BALANCE) need TUNE_TARGET=cluster"),
    ({"MAXTHREADS": ",".join(str(n) for n in range(1, 9)), "ACCEPTCOUNT": ",".join(str(n) for n in range(1, 10))},
     "the sweep has 72 points: at most 64"),
    ({"MAXTHREADS": "4", "TUNE_ROUNDS": "0"}, "TUNE_ROUNDS='0' is not allowed: use a whole number of rounds from 1 to 10"),
    ({"MAXTHREADS": "4", "TUNE_ROUNDS": "two"}, "TUNE_ROUNDS='two' is not allowed"),
])
def test_bad_sweeps_are_refused_with_what_is_allowed(environ, message):
    with pytest.raises(SweepError) as refused:
        read_sweep(environ)
    assert message in str(refused.value)


@pytest.mark.parametrize("text, message", [
    ("grid: [unclosed", "is not valid YAML"),
    ("just a string", "has the wrong shape"),
    ("grid: {MAXTHREADS: [4]}\npoints: [{MAXTHREADS: 4}]", "has the wrong shape"),
    ("grid: {MAXTHREADS: 4}", "grid must map each parameter to a list of values"),
    ("points: []", "points must be a list of settings"),
    ("grid: {THREADZ: [4]}", "unknown parameter THREADZ: use PROTOCOL, MAXTHREADS"),
    ("points: [{MAXTHREADS: 4, GC: zgc}]", "unknown parameter GC"),
])
def test_bad_sweep_files_are_refused(tmp_path, text, message):
    path = tmp_path / "sweep.yaml"
    path.write_text(text)
    with pytest.raises(SweepError) as refused:
        read_sweep({"SWEEP": str(path)})
    assert message in str(refused.value)


@pytest.mark.parametrize("value", ["unequal", "1:2", "0:1:1", "1:2:300", "a:b:c"])
def test_bad_weights_are_refused(value):
    with pytest.raises(SweepError, match=f"NODEWEIGHTS='{value}' is not allowed: use equal, profile, capacity"):
        tune.weights_for(value, BASE)


def test_traffic_settings_sweep_with_a_list_and_set_the_whole_sweep_with_one_value():
    # TLS and HTTP are also the settings' own names: one value is the sweep's setting, a list is swept.
    sweep = read_sweep({"MAXTHREADS": "4,64", "TLS": "lb", "HTTP": "1.1,2", "CONNECTIONLIFE": "keep,per-user"})
    assert sweep.parameters == ["MAXTHREADS", "HTTP", "CONNECTIONLIFE"] and len(sweep.points) == 8
    resolve(sweep, {**BASE, "TLS": "off"})
    assert sweep.points[-1].env == {"TOMCAT_MAX_THREADS": "64", "HTTP": "2", "CONNECTION_LIFE": "per-user"}
    swept = read_sweep({"TLS": "off,lb,node"})
    assert swept.target == "node1" and [p.values for p in swept.points] == [{"TLS": t} for t in ("off", "lb", "node")]


def test_a_point_is_this_process_s_environment_while_it_runs_and_then_restored(monkeypatch):
    monkeypatch.setenv("TLS", "off,lb")
    monkeypatch.setenv("CAPBENCH_TLS", "off,lb")
    monkeypatch.setenv("HTTP", "2")
    monkeypatch.delenv("CONNECTION_LIFE", raising=False)
    sweep = read_sweep(dict(os.environ))
    tune.unset_swept(sweep)  # the list is the sweep's; HTTP=2, one value, stays the sweep's setting
    assert "TLS" not in os.environ and "CAPBENCH_TLS" not in os.environ and os.environ["HTTP"] == "2"
    with tune.applied({"TLS": "lb", "CONNECTION_LIFE": "per-user"}):
        assert os.environ["TLS"] == "lb" and os.environ["CONNECTION_LIFE"] == "per-user"
    assert "TLS" not in os.environ and "CONNECTION_LIFE" not in os.environ and os.environ["HTTP"] == "2"
