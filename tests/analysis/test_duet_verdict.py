"""The duet's verdict (analysis/duet_verdict.py): the sign-test interval of the median ratio and the
non-inferiority rule, on pairs written here."""
from __future__ import annotations

import pytest

from analysis.duet_verdict import (
    CANNOT_TELL,
    FELL,
    HOLDS,
    Pair,
    SlotResult,
    aa_band_pct,
    judge,
    median_interval,
    sign_coverage,
)


def pair(number: int, a: float, b: float, step: float = 0.05) -> Pair:
    """A pair whose searches bracketed a and b within `step` (the capacity, and the failure that far above)."""
    return Pair(number, SlotResult("node1", a, round(a * (1 + step), 1)), SlotResult("node2", b, round(b * (1 + step), 1)))


def test_the_sign_test_levels_are_the_binomial_ones():
    assert sign_coverage(5, 1) == pytest.approx(0.9375)
    assert sign_coverage(8, 2) == pytest.approx(1 - 2 * 9 / 256)
    assert sign_coverage(3, 1) == pytest.approx(0.75)


def test_the_interval_is_the_narrowest_reaching_ninety_percent():
    five = median_interval([0.9, 0.95, 1.0, 1.02, 1.1])
    assert (five.low, five.high, five.median, five.confidence) == (0.9, 1.1, 1.0, pytest.approx(0.9375))
    eight = median_interval([0.80, 0.9, 0.95, 0.97, 1.0, 1.02, 1.05, 1.3])
    assert (eight.low, eight.high) == (0.9, 1.05) and eight.confidence == pytest.approx(0.9297, abs=1e-4)
    with pytest.raises(ValueError, match="at least 3"):
        median_interval([1.0, 1.0])


def test_the_ratio_is_of_the_brackets_middles():
    made = Pair(1, SlotResult("node1", 400, 440), SlotResult("node2", 300, 330))
    assert made.ratio == pytest.approx(315 / 420)
    assert Pair(1, SlotResult("node1", 400, None), SlotResult("node2", 300, 330)).ratio == pytest.approx(315 / 400)
    assert Pair(1, SlotResult("node1", None, 50), SlotResult("node2", 300, 330)).ratio is None


def test_a_drop_beyond_the_tolerance_fell_within_it_holds_and_across_it_cannot_tell():
    slower = [pair(n, 400, 330) for n in range(1, 6)]  # B/A 0.825
    assert judge(slower, 10).verdict == FELL
    alike = [pair(n, 400, b) for n, b in enumerate((392, 400, 404, 410, 396), 1)]
    said = judge(alike, 5)
    assert said.verdict == HOLDS and "wholly at or above 0.950" in said.message
    spread = [pair(n, 400, b) for n, b in enumerate((340, 400, 380, 410, 396), 1)]
    said = judge(spread, 10)
    assert said.verdict == CANNOT_TELL and "spans 0.900" in said.message


def test_too_few_ratios_cannot_tell_and_say_why():
    pairs = [pair(1, 400, 390), Pair(2, SlotResult("node2", None, 50), SlotResult("node1", 300, 330)),
             pair(3, 400, 405)]
    said = judge(pairs, 10)
    assert said.verdict == CANNOT_TELL and said.interval is None
    assert "2 of 3 pairs gave a ratio (1 without a capacity on one side)" in said.message


def test_the_aa_band_is_the_farthest_reach_from_one():
    assert aa_band_pct(median_interval([0.97, 0.99, 1.0, 1.01, 1.04])) == 4.0
    assert aa_band_pct(median_interval([0.93, 0.99, 1.0, 1.01, 1.02])) == 7.0
