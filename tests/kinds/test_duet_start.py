"""Where a duet's two searches start (capbench/kinds/duet.py's grid_starts): each near its own build's capacity, on one
grid for both builds, so that one pair's ratio is not handed on to the next."""
from __future__ import annotations

import pytest

from capbench.kinds.duet import grid_starts


def test_each_build_starts_at_the_grid_point_nearest_below_its_own_capacity():
    # The grid 200 × 1.25^k: 0.8 of 610.4 is 488.3 (k = 3), of 102.4 is 81.9 (k = -4).
    assert grid_starts([610.4, 102.4], 200.0, 2.0) == ([488.3, 81.9], 1.25)
    # Between two points, the nearer: 0.8 × 546.6 = 437.3 is nearer 488.3 than 390.6 (in ratio).
    assert grid_starts([546.6, 546.6], 200.0, 2.0) == ([488.3, 488.3], 1.25)


def test_close_capacities_share_a_start_and_no_start_carries_their_ratio():
    # An A/A: capacities 2.8 % apart start at one point, not 2.8 % apart.
    a, b = grid_starts([700.0, 719.6], 50.0, 2.0)[0]
    assert a == b
    for ratio in (1.028, 1.09, 1.122):
        starts, growth = grid_starts([700.0, 700.0 * ratio], 50.0, 2.0)
        ratio_of_starts = starts[1] / starts[0]
        assert any(ratio_of_starts == pytest.approx(growth ** k, rel=1e-3) for k in range(0, 3))


def test_a_build_without_a_capacity_starts_from_the_lower_one_found_and_none_from_start_rate():
    assert grid_starts([None, 700.0], 50.0, 2.0) == ([582.1, 582.1], 1.25)  # 50 × 1.25^11, nearest 560
    assert grid_starts([None, None], 50.0, 2.0) == ([50.0, 50.0], 2.0)


def test_starts_may_be_below_start_rate_but_not_below_the_lowest_rate_searched():
    assert grid_starts([40.0, 45.0], 50.0, 2.0) == ([32.0, 40.0], 1.25)
    assert grid_starts([0.5, 45.0], 50.0, 2.0)[0][0] == 1.0
