"""bench-overhead's ratio: capacity with monitoring over capacity without it."""
from __future__ import annotations

from kinds.overhead import overhead_ratio


def test_overhead_ratio_is_with_over_without_monitoring():
    targets = {"node1 monitor off": {"repeats": [400.0, 420.0]}, "node1 monitor on": {"repeats": [392.0, 420.0]}}
    overhead = overhead_ratio(targets)
    assert overhead["capacity_off_rps"] == 410.0 and overhead["capacity_on_rps"] == 406.0
    assert overhead["ratio_on_over_off"] == 0.99 and overhead["pair_ratios"] == [0.98, 1.0]
    assert overhead_ratio({"node1 monitor off": {"repeats": []}})["ratio_on_over_off"] is None
