"""The summary's monitoring parts: the figures at a target's capacity, and bench-overhead's ratio."""
from __future__ import annotations

from load.bench import metrics_at, overhead_ratio


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


def test_overhead_ratio_is_with_over_without_monitoring():
    targets = {"node1 monitor off": {"repeats": [400.0, 420.0]}, "node1 monitor on": {"repeats": [392.0, 420.0]}}
    overhead = overhead_ratio(targets)
    assert overhead["capacity_off_rps"] == 410.0 and overhead["capacity_on_rps"] == 406.0
    assert overhead["ratio_on_over_off"] == 0.99 and overhead["pair_ratios"] == [0.98, 1.0]
    assert overhead_ratio({"node1 monitor off": {"repeats": []}})["ratio_on_over_off"] is None
