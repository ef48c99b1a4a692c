"""summary.json's rules: the host figures at a target's capacity, and which steps belong to a search."""
from __future__ import annotations

from rundata.summary import metrics_at, of_label


def record(step: int, target: str, rate: float, passed: bool, cpu: float | None = None) -> dict:
    r = {"step": step, "target": target, "offered_rps": rate, "passed": passed}
    if cpu is not None:
        r["host_metrics"] = {"node1": {"cpu_pct_of_quota": cpu}}
    return r


def test_figures_at_capacity_come_from_the_last_logged_passing_step_at_that_rate():
    records = [record(1, "node1", 400, True, 70), record(2, "node1", 800, False, 99),
               record(3, "node1", 400, True, 72), record(4, "cluster", 400, True, 10)]
    assert metrics_at(records, "node1", 400) == {"step": 3, "node1": {"cpu_pct_of_quota": 72}}
    assert metrics_at(records, "node1", None) is None
    assert metrics_at(records, "node2", 400) is None                      # another target's steps do not count
    assert metrics_at([record(1, "node1", 400, True)], "node1", 400) is None  # not logged (MONITOR=off)


def test_a_step_belongs_to_its_search_label_or_older_steps_to_their_target():
    assert of_label({"label": "cluster v2", "target": "cluster"}, "cluster v2")
    assert not of_label({"label": "cluster v2", "target": "cluster"}, "cluster v3")
    assert of_label({"target": "node1"}, "node1 monitor on")  # recorded before steps carried their label
    assert not of_label({"target": "node2"}, "node1")
