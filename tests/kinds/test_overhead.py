"""bench-overhead's ratio: capacity with monitoring over capacity without it."""
from __future__ import annotations

from capbench.kinds.overhead import overhead_ratio


def test_overhead_ratio_is_with_over_without_monitoring():
    overhead = overhead_ratio({"node1 monitor off": [400.0, 420.0], "node1 monitor on": [392.0, 420.0]})
    assert overhead["capacity_off_rps"] == 410.0 and overhead["capacity_on_rps"] == 406.0
    assert overhead["ratio_on_over_off"] == 0.99 and overhead["pair_ratios"] == [0.98, 1.0]
    assert overhead_ratio({"node1 monitor off": []})["ratio_on_over_off"] is None
