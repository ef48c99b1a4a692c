"""The rank interval of B/A behind make compare: the U statistic's distribution counted right, the coverage it
states is the one it has (against scipy's exact Mann–Whitney test and by simulation), the search's step widens
it, and too few repeats are refused."""
from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from scipy.stats import mannwhitneyu

from capbench.analysis import significance


@pytest.mark.parametrize("m, n", [(1, 1), (2, 3), (3, 3), (3, 5), (4, 4)])
def test_u_counts_match_every_ordering_counted_by_hand(m, n):
    counts = [0] * (m * n + 1)
    for first in itertools.combinations(range(m + n), m):  # the ranks the first sample takes
        counts[sum(1 for i in first for j in set(range(m + n)) - set(first) if i > j)] += 1
    assert significance.u_counts(m, n) == tuple(counts) and sum(counts) == math.comb(m + n, m)


def test_the_levels_each_number_of_repeats_can_reach():
    assert significance.coverage(3, 3, 1) == pytest.approx(0.9)  # 20 orderings: 95 % is out of reach
    assert significance.coverage(3, 4, 1) == pytest.approx(1 - 2 / 35)
    interval = significance.ratio_interval([10, 11, 12, 13, 14], [20, 21, 22, 23, 24])
    assert interval.confidence == pytest.approx(1 - 2 * 4 / 252)  # 5 v 5: the narrowest with ≥ 95 %: 96.8 %


def test_the_interval_excludes_no_change_exactly_when_the_exact_mann_whitney_test_rejects():
    rng = np.random.default_rng(19)
    for m, n in ((3, 3), (3, 4), (4, 4), (5, 5), (4, 6)):
        for _ in range(200):
            a = rng.lognormal(6.4, 0.08, m).tolist()
            b = (rng.lognormal(6.4, 0.08, n) * rng.choice([1.0, 1.1, 1.25])).tolist()
            interval = significance.ratio_interval(a, b)
            p = mannwhitneyu(a, b, method="exact").pvalue
            assert interval.excludes_no_change == (p <= 1 - interval.confidence + 1e-12), (a, b, p)


@pytest.mark.parametrize("m, n", [(3, 3), (5, 5)])
def test_runs_of_the_same_code_are_called_different_no_more_often_than_the_confidence_says(m, n):
    rng = np.random.default_rng(7)
    trials = 4000
    wrong = sum(significance.ratio_interval(rng.lognormal(6.4, 0.15, m).tolist(),
                                            rng.lognormal(6.4, 0.15, n).tolist()).excludes_no_change
                for _ in range(trials))
    stated = 1 - significance.ratio_interval([1.0] * m, [1.0] * n).confidence  # 10 % for 3 v 3, 3.2 % for 5 v 5
    assert wrong / trials == pytest.approx(stated, abs=3 * math.sqrt(stated * (1 - stated) / trials))


def test_the_search_precision_widens_each_side_and_the_result_is_reproducible():
    a, b = [600.0, 610.0, 620.0], [680.0, 690.0, 700.0]
    bare = significance.ratio_interval(a, b)
    assert (bare.low, bare.high) == pytest.approx((680 / 620, 700 / 600)) and bare.ratio == pytest.approx(690 / 610)
    wide = significance.ratio_interval(a, b, a_precision_pct=5, b_precision_pct=15)
    assert (wide.low, wide.high) == pytest.approx((680 / 620 / 1.05, 700 / 600 * 1.15))
    assert significance.ratio_interval(a, b, 5, 15) == wide  # no random numbers: the same every time


def test_fewer_than_three_repeats_a_side_are_refused_with_why():
    with pytest.raises(significance.TooFewRepeats, match="2 repeats in A, 3 in B: .* needs 3 a side, REPEATS=3"):
        significance.ratio_interval([600.0, 610.0], [680.0, 690.0, 700.0])
    with pytest.raises(ValueError, match="> 0"):
        significance.ratio_interval([600.0, 0.0, 610.0], [680.0, 690.0, 700.0])
