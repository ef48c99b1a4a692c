"""Where a duet's two searches start (load/kinds/duet.py's shared_start): on one grid for both builds, so that one
pair's ratio is not handed on to the next."""
from __future__ import annotations

from load.kinds.duet import shared_start


def test_both_builds_start_near_the_lower_capacity_found_with_the_near_guess_growth():
    assert shared_start([800.0, 700.0], 50.0, 2.0) == (560.0, 1.25)
    assert shared_start([None, 700.0], 50.0, 2.0) == (560.0, 1.25)  # B never found one: A's
    assert shared_start([None, None], 50.0, 2.0) == (50.0, 2.0)
    assert shared_start([40.0, 45.0], 50.0, 2.0) == (50.0, 1.25)  # never below START_RATE

