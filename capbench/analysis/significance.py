"""Whether capacity changed between two runs, with a stated confidence: the exact, distribution-free confidence
interval of the ratio B/A of the two runs' capacities (Moses' interval, the Mann–Whitney U test turned into an
interval), from each run's repeated searches.

Why this test. A run's repeats are a handful of numbers (REPEATS=3 is usual) whose distribution nobody knows:
a t-interval would assume a normal shape that three values cannot show, and a bootstrap of three values
resamples only ten distinct samples and covers far less often than it claims. The rank interval assumes only
that the repeats of a run are exchangeable draws and that a change scales capacity (a shift of log capacity);
its coverage is exact, computed from the U statistic's own distribution, and involves no random numbers, so it
is the same every time it is computed.

The price is granularity: with m and n repeats there are only C(m+n, m) equally likely orderings, so few
confidence levels can be reached. Three against three gives 20 orderings: the only finite interval (from the
smallest to the largest of the nine ratios b/a) covers 90 %, never 95 %. The level actually reached is
always stated; CONFIDENCE is the level aimed at.

The search's resolution widens the interval: a capacity c found by the search only says that the true one lies
in [c, c·(1 + precision)) (capbench/search/capacity.py stops bisecting there), so the ratio of two true capacities can be a
factor (1 + precision) further either way than the ratio of the found ones."""
from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache

CONFIDENCE = 0.95  # the level aimed at; the interval's own (reachable) level is reported beside it
# Fewer on a side and the reachable levels are poor (2 v 2: 67 %, 2 v 3: 80 %), and a single repeat says nothing
# of its own run's noise.
MIN_REPEATS = 3
ROUNDING = 1e-9


class TooFewRepeats(ValueError):
    """A side has fewer than MIN_REPEATS capacities: the noise between repeats cannot be judged."""


@dataclass(frozen=True)
class RatioInterval:
    """B/A: the ratio of the medians, and the interval of the true ratio at `confidence`."""
    ratio: float
    low: float
    high: float
    confidence: float  # the coverage this interval has (exact for untied repeats), e.g. 0.9 for 3 v 3

    @property
    def excludes_no_change(self) -> bool:
        # A bound that is 1 but for rounding (repeats exactly one search step apart) leaves no change in.
        return self.low > 1.0 + ROUNDING or self.high < 1.0 - ROUNDING


@lru_cache(maxsize=None)
def u_counts(m: int, n: int) -> tuple[int, ...]:
    """How many of the C(m+n, m) orderings of two samples of m and n give each value of the Mann–Whitney U
    (0..m·n), by the classic recurrence on whether the largest value belongs to the first sample or not."""
    if m == 0 or n == 0:
        return (1,)
    with_largest_in_first = u_counts(m - 1, n)  # it beats all n others: U grows by n
    with_largest_in_second = u_counts(m, n - 1)
    counts = [0] * (m * n + 1)
    for u, c in enumerate(with_largest_in_first):
        counts[u + n] += c
    for u, c in enumerate(with_largest_in_second):
        counts[u] += c
    return tuple(counts)


def coverage(m: int, n: int, k: int) -> float:
    """The coverage of the interval from the k-th smallest to the k-th largest of the m·n pairwise ratios: the
    true ratio falls below the k-th smallest exactly when fewer than k ratios lie below it, i.e. U ≤ k − 1."""
    counts = u_counts(m, n)
    return 1.0 - 2.0 * sum(counts[:k]) / sum(counts)


def _median(values: list[float]) -> float:
    ordered = sorted(values)
    middle = len(ordered) // 2
    return ordered[middle] if len(ordered) % 2 else (ordered[middle - 1] + ordered[middle]) / 2


def ratio_interval(a: list[float], b: list[float], a_precision_pct: float = 0.0, b_precision_pct: float = 0.0,
                   confidence: float = CONFIDENCE) -> RatioInterval:
    """The interval of B/A from the repeats a and b (capacities > 0): the narrowest rank interval whose
    coverage is at least `confidence`, or, where the repeats are too few to reach it, the widest finite one and
    its lower coverage; widened by each run's search precision (B's true capacity may be up to a step above
    the found one, raising the ratio; A's likewise, lowering it)."""
    if len(a) < MIN_REPEATS or len(b) < MIN_REPEATS:
        raise TooFewRepeats(f"{len(a)} repeat{'s' * (len(a) != 1)} in A, {len(b)} in B: the noise between "
                            f"repeats needs {MIN_REPEATS} a side, REPEATS={MIN_REPEATS}")
    if min(a) <= 0 or min(b) <= 0:
        raise ValueError("capacities must be > 0")
    m, n = len(a), len(b)
    logs = sorted(math.log(y) - math.log(x) for x in a for y in b)
    k = 1
    while k < len(logs) // 2 and coverage(m, n, k + 1) >= confidence:
        k += 1
    return RatioInterval(ratio=_median(b) / _median(a), low=math.exp(logs[k - 1]) / (1 + a_precision_pct / 100),
                         high=math.exp(logs[len(logs) - k]) * (1 + b_precision_pct / 100),
                         confidence=coverage(m, n, k))
