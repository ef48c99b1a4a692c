"""summary.json's rules: the host figures at a target's capacity, and which steps belong to a search."""
from __future__ import annotations

from capbench.metrics.series import application_deployed
from capbench.rundata.summary import metrics_at, of_label, serving_nodes
from step_records import a_step


def record(step: int, target: str, rate: float, passed: bool, cpu: float | None = None):
    return a_step(step, target, rate, passed, host_metrics=None if cpu is None else {"node1": {"cpu_pct_of_quota": cpu}})


def test_figures_at_capacity_come_from_the_last_logged_passing_step_at_that_rate():
    records = [record(1, "node1", 400, True, 70), record(2, "node1", 800, False, 99),
               record(3, "node1", 400, True, 72), record(4, "cluster", 400, True, 10)]
    assert metrics_at(records, "node1", 400) == {"step": 3, "node1": {"cpu_pct_of_quota": 72}}
    assert metrics_at(records, "node1", None) is None
    assert metrics_at(records, "node2", 400) is None                      # another target's steps do not count
    assert metrics_at([record(1, "node1", 400, True)], "node1", 400) is None  # not logged (MONITOR=off)


def test_a_median_no_step_ran_at_takes_the_figures_of_the_nearest_passed_rate():
    # Two repeats found 750 and 996.1/s: their median, 873.05, was never offered.
    records = [record(1, "N=1", 750, True, 60), record(2, "N=1", 800, False, 99), record(3, "N=1", 996.1, True, 90),
               record(4, "N=1", 1054.7, False, 99), record(5, "N=1", 900, False, 97)]
    assert metrics_at(records, "N=1", 873.05) == {"step": 1, "node1": {"cpu_pct_of_quota": 60}}
    assert metrics_at(records + [record(6, "N=1", 873.05, True, 75)], "N=1", 873.05)["step"] == 6
    assert metrics_at([record(1, "N=1", 750, True, 60), record(2, "N=1", 950, True, 80)], "N=1", 850)["step"] == 1


def test_a_step_belongs_to_its_search_label_or_older_steps_to_their_target():
    assert of_label(a_step(label="cluster v2", target="cluster"), "cluster v2")
    assert not of_label(a_step(label="cluster v2", target="cluster"), "cluster v3")
    assert of_label(a_step(target="node1"), "node1 monitor on")  # recorded before steps carried their label
    assert not of_label(a_step(target="node2"), "node1")


def test_the_nodes_that_served_are_those_the_workload_or_the_balancer_counted_requests_on():
    grinder = {"node1": {"grind_requests_per_s": 400.0}, "node2": {"grind_requests_per_s": 0.0, "cpu_pct_of_quota": 5}}
    assert list(serving_nodes(grinder)) == ["node1"]
    # A user's application counts its health path's checks too (3.3/s on each node): HAProxy's responses tell.
    nodes = {"node1": {"app_requests_per_s": 3030.2, "grind_requests_per_s": 0.0},
             "node2": {"app_requests_per_s": 3.3, "grind_requests_per_s": 0.0}}
    app = {**nodes, "lb": {"servers": {"node1": {"responses_per_s": 3026.9}, "node2": {"responses_per_s": 0.0}}}}
    assert list(serving_nodes(app)) == ["node1"]
    assert list(serving_nodes(nodes)) == ["node1", "node2"]  # the balancer not monitored: every node with requests
    # An executable JAR on an embedded Jetty: no Tomcat counts at all, the balancer's alone.
    jetty = {node: {"grind_requests_per_s": None, "app_requests_per_s": None} for node in ("node1", "node2")}
    jetty["lb"] = {"servers": {"node1": {"responses_per_s": 900.0}, "node2": {"responses_per_s": 0.0}}}
    assert list(serving_nodes(jetty)) == ["node1"]


def test_a_jars_embedded_tomcat_is_an_application_and_the_grinder_alone_is_not():
    metric = "openmetrics.capbench.tomcat_servlet_requestcount_total"
    spring = {(metric, '0 module:/ servlet:dispatcherServlet'): [1.0]}
    grinder = {(metric, '0 module:/ servlet:grind'): [1.0], (metric, '1 module:/ servlet:health'): [1.0]}
    beside = {**spring, (metric, '2 module:/capbench servlet:grind'): [1.0]}
    assert [application_deployed(s, metric) for s in (spring, grinder, beside, {})] == [True, False, True, False]


def test_summary_json_is_written_through_its_type_and_loses_nothing_it_was_given():
    """The run's summary goes through Summary (and each target through TargetSummary) on its way to the file: what
    it held is written back, the kind's findings and earlier entries at the top level, and writing it again gives
    the same."""
    import json
    from pathlib import Path

    from capbench.rundata.summary import SUMMARY_SCHEMA, Summary, target_summary

    given = json.loads((Path(__file__).parent.parent / "report" / "data" / "20261122T145620Z-f876294-dirty-cluster"
                        / "summary.json").read_text())
    given["targets"]["node1"] = target_summary(given["targets"]["node1"]["searches"])
    written = Summary.from_json(given).to_json()
    assert written["schema"] == SUMMARY_SCHEMA
    for key, value in given.items():
        if key != "targets":
            assert written[key] == value, key
    for label, target in given["targets"].items():
        assert {k: written["targets"][label][k] for k in target} == target, label
    assert written["targets"]["node1"] == given["targets"]["node1"]  # a target of today's shape, whole
    assert Summary.from_json(written).to_json() == written
    assert "events" not in written and written["error"] is None  # optional fields only where a run has them
