"""The duet's verdict (capbench/analysis/duet_verdict.py): the crossover interval of B/A with the slots' effect taken out,
and the non-inferiority rule, on pairs written here."""
from __future__ import annotations

import math
import statistics

import pytest
from scipy import stats

from capbench.analysis.duet_verdict import (
    CANNOT_TELL,
    FELL,
    HOLDS,
    Pair,
    SlotResult,
    aa_band_pct,
    crossover_interval,
    judge,
)


def pair(number: int, a: float, b: float, step: float = 0.05) -> Pair:
    """Pair `number` (A on node1 when odd, node2 when even), its searches bracketing a and b within `step`."""
    a_slot, b_slot = ("node1", "node2") if number % 2 else ("node2", "node1")
    return Pair(number, SlotResult(a_slot, a, round(a * (1 + step), 1)), SlotResult(b_slot, b, round(b * (1 + step), 1)))


def test_the_ratio_is_of_the_brackets_middles():
    made = Pair(1, SlotResult("node1", 400, 440), SlotResult("node2", 300, 330))
    assert made.ratio == pytest.approx(315 / 420)
    assert Pair(1, SlotResult("node1", 400, None), SlotResult("node2", 300, 330)).ratio is None  # a lower bound
    assert made.reach == pytest.approx((300 / 440 / made.ratio, 330 / 400 / made.ratio))
    assert Pair(1, SlotResult("node1", None, 50), SlotResult("node2", 300, 330)).ratio is None
    assert Pair.from_dict(made.as_dict()) == made


def test_a_faster_slot_cancels_and_is_reported():
    # B is 0.8 of A; node1's slot runs 6 % faster: A on node1 shows 0.8/1.06, A on node2 0.8·1.06.
    pairs = [pair(n, 500, 500 * 0.8 * (1.06 if n % 2 == 0 else 1 / 1.06)) for n in range(1, 7)]
    interval = crossover_interval(pairs)
    assert interval.ratio == pytest.approx(0.8, rel=1e-3) and interval.slot_effect == pytest.approx(1.06, rel=1e-3)
    # Nothing but the slot's effect: what is left is the brackets' reach, 5 % each way.
    assert (interval.low, interval.high) == pytest.approx((0.8 / 1.05, 0.8 * 1.05), rel=1e-3)


def test_searches_that_end_in_the_same_bracket_leave_its_width():
    pairs = [Pair(n, SlotResult(a, 751.5, 791), SlotResult(b, 751.5, 791))
             for n, (a, b) in enumerate([("node1", "node2"), ("node2", "node1")] * 2 + [("node1", "node2")], 1)]
    interval = crossover_interval(pairs)
    assert interval.ratio == 1.0 and (interval.low, interval.high) == pytest.approx((751.5 / 791, 791 / 751.5))


def test_the_interval_is_students_t_on_the_orientations_spread():
    logs = {1: 0.02, 3: -0.01, 5: 0.0, 2: 0.05, 4: 0.03}
    pairs = [pair(n, 400, 400 * math.exp(x), step=1e-4) for n, x in logs.items()]  # brackets of no width
    interval = crossover_interval(pairs)
    one, other = [0.02, -0.01, 0.0], [0.05, 0.03]
    change = (statistics.fmean(one) + statistics.fmean(other)) / 2
    spread = sum((x - statistics.fmean(one)) ** 2 for x in one) + sum((x - statistics.fmean(other)) ** 2 for x in other)
    reach = stats.t.ppf(0.95, 3) * math.sqrt(spread / 3 / 4 * (1 / 3 + 1 / 2))
    assert (interval.low, interval.ratio, interval.high) == pytest.approx(
        (math.exp(change - reach), math.exp(change), math.exp(change + reach)), rel=3e-4)  # rates to 0.1/s
    assert interval.pairs == 5 and interval.confidence == 0.9


def test_a_drop_beyond_the_tolerance_fell_within_it_holds_and_across_it_cannot_tell():
    slower = [pair(n, 400, b) for n, b in enumerate((330, 328, 335, 326, 331), 1)]
    assert judge(slower, 10).verdict == FELL
    alike = [pair(n, 400, b, step=0.01) for n, b in enumerate((392, 400, 404, 410, 396), 1)]  # 1 % brackets
    said = judge(alike, 5)
    assert said.verdict == HOLDS and "wholly at or above 0.950" in said.message
    spread = [pair(n, 400, b) for n, b in enumerate((300, 400, 380, 330, 396), 1)]
    said = judge(spread, 10)
    assert said.verdict == CANNOT_TELL and "spans 0.900" in said.message


def test_too_few_ratios_or_a_on_one_slot_only_cannot_tell_and_say_why():
    pairs = [pair(1, 400, 390), Pair(2, SlotResult("node2", None, 50), SlotResult("node1", 300, 330)),
             pair(3, 400, 405)]
    said = judge(pairs, 10)
    assert said.verdict == CANNOT_TELL and said.interval is None
    assert "2 with a ratio" in said.message and "(1 of 3 pairs without a ratio on one side, left out)" in said.message
    said = judge([pair(1, 400, 390), pair(3, 400, 395), pair(5, 400, 399)], 10)
    assert said.verdict == CANNOT_TELL and "A on 1 slot(s)" in said.message


def test_the_aa_band_is_the_farthest_reach_from_one():
    interval = crossover_interval([pair(n, 400, b) for n, b in enumerate((392, 400, 404, 410, 396), 1)])
    assert aa_band_pct(interval) == round(100 * max(1 - interval.low, interval.high - 1), 1) > 0


def test_a_verdict_names_the_pairs_it_left_out_for_want_of_a_ratio():
    # Three pairs with a ratio are enough for an interval; the fourth, where B's search found no capacity, is not
    # silently dropped: the message says it was left out.
    pairs = [pair(1, 400, 390), pair(2, 400, 398), pair(3, 400, 395),
             Pair(4, SlotResult("node2", 300, 330), SlotResult("node1", None, 50))]
    said = judge(pairs, 10)
    assert said.interval is not None and said.interval.pairs == 3
    assert "1 of 4 pairs without a ratio on one side, left out" in said.message
