"""A duet's verdict: build B against build A from pairs measured together (load/duet.py), each pair two capacity
searches stepped at the same instants on twin slots, the builds on swapped slots from one pair to the next.

Each pair gives one ratio B/A, measured while both saw the same machine: a machine that slows down slows both, and
the ratio stays. The search knows a capacity only as a bracket (the highest rate that passed, the lowest that
failed above it); the pair's ratio is that of the brackets' middles, and what is left of the bracket's width
spreads the ratios like any other noise, which the interval below then holds.

The interval is the sign test's, for the median ratio: with n pairs, the k-th smallest and the k-th largest ratio
bound it with confidence 1 − 2·P(Binomial(n, ½) ≤ k − 1), whatever the ratios' distribution, provided the pairs
are independent draws. Five pairs reach 93.75 % with the smallest and the largest (k = 1); fewer cannot reach 90 %,
and the level reached is always said. The verdict is one of non-inferiority, with the tolerance the user allows
(GATE_DROP_PCT): B FELL when the whole interval lies below 1 − tolerance, HOLDS when the whole interval lies at or
above it, and otherwise the pairs CANNOT TELL (the noise spans the line).

An A/A duet (the same build on both slots) measures what this machine can resolve: its band, the largest distance
of its interval from 1, is the smallest drop a duet here can show; a tolerance below it is refused."""
from __future__ import annotations

import math
import statistics
from dataclasses import dataclass

CONFIDENCE = 0.90  # the level aimed at; the level reached is reported beside it
MIN_PAIRS = 3  # fewer and the interval is the pairs themselves at 75 % or less: not worth a verdict
HOLDS, FELL, CANNOT_TELL = "holds", "fell", "cannot tell"


@dataclass(frozen=True)
class SlotResult:
    """One build's search in a pair: its slot (the node), the capacity and the lowest rate that failed above it."""
    slot: str
    capacity_rps: float | None
    lowest_failure_rps: float | None

    @property
    def middle(self) -> float | None:
        """The middle of the bracket, or the capacity alone when nothing failed above it (a lower bound)."""
        if self.capacity_rps is None:
            return None
        if self.lowest_failure_rps is None:
            return self.capacity_rps
        return (self.capacity_rps + self.lowest_failure_rps) / 2


@dataclass(frozen=True)
class Pair:
    number: int
    a: SlotResult
    b: SlotResult

    @property
    def ratio(self) -> float | None:
        """B/A of the brackets' middles; None when either search found no capacity."""
        if self.a.middle is None or self.b.middle is None:
            return None
        return self.b.middle / self.a.middle

    def as_dict(self) -> dict:
        ratio = self.ratio
        return {"pair": self.number, "a_slot": self.a.slot, "b_slot": self.b.slot,
                "a_rps": self.a.capacity_rps, "b_rps": self.b.capacity_rps,
                "a_lowest_failure_rps": self.a.lowest_failure_rps, "b_lowest_failure_rps": self.b.lowest_failure_rps,
                "ratio": round(ratio, 4) if ratio is not None else None}


def sign_coverage(n: int, k: int) -> float:
    """The confidence that the k-th smallest and k-th largest of n independent ratios bound their median."""
    return 1.0 - 2.0 * sum(math.comb(n, i) for i in range(k)) / 2 ** n


@dataclass(frozen=True)
class Interval:
    median: float
    low: float
    high: float
    confidence: float
    pairs: int


def median_interval(ratios: list[float], confidence: float = CONFIDENCE) -> Interval:
    """The narrowest sign-test interval of the median ratio reaching `confidence`, or with too few pairs the
    widest (the smallest to the largest) and the lower level it reaches."""
    if len(ratios) < MIN_PAIRS:
        raise ValueError(f"{len(ratios)} pairs with a ratio: a verdict needs at least {MIN_PAIRS}")
    ordered = sorted(ratios)
    n = len(ordered)
    k = 1
    while k < n // 2 and sign_coverage(n, k + 1) >= confidence:
        k += 1
    return Interval(statistics.median(ordered), ordered[k - 1], ordered[n - k], sign_coverage(n, k), n)


@dataclass(frozen=True)
class DuetVerdict:
    verdict: str
    message: str
    interval: Interval | None
    floor: float  # 1 − tolerance: B may lose this much and hold

    def as_dict(self) -> dict:
        i = self.interval
        return {"verdict": self.verdict, "message": self.message, "floor": self.floor,
                "median_ratio": round(i.median, 4) if i else None,
                "interval": [round(i.low, 4), round(i.high, 4)] if i else None,
                "confidence": round(i.confidence, 4) if i else None, "pairs": i.pairs if i else 0}


def judge(pairs: list[Pair], tolerance_pct: float) -> DuetVerdict:
    """Non-inferiority of B against A at `tolerance_pct` (module docstring)."""
    floor = 1 - tolerance_pct / 100
    ratios = [p.ratio for p in pairs if p.ratio is not None]
    missing = len(pairs) - len(ratios)
    if len(ratios) < MIN_PAIRS:
        why = f" ({missing} without a capacity on one side)" if missing else ""
        return DuetVerdict(CANNOT_TELL, f"{len(ratios)} of {len(pairs)} pairs gave a ratio{why}: a verdict needs "
                           f"{MIN_PAIRS}", None, floor)
    interval = median_interval(ratios)
    said = (f"B/A {interval.median:.3f}, in [{interval.low:.3f}, {interval.high:.3f}] at "
            f"{interval.confidence:.1%} over {interval.pairs} pairs")
    if interval.high < floor:
        return DuetVerdict(FELL, f"{said}: wholly below {floor:.3f} (a drop beyond {tolerance_pct:g} %)", interval,
                           floor)
    if interval.low >= floor:
        return DuetVerdict(HOLDS, f"{said}: wholly at or above {floor:.3f} (no drop beyond {tolerance_pct:g} %)",
                           interval, floor)
    return DuetVerdict(CANNOT_TELL, f"{said}: it spans {floor:.3f}, the line a {tolerance_pct:g} % drop draws",
                       interval, floor)


def aa_band_pct(interval: Interval) -> float:
    """An A/A duet's band: how far from 1 its interval reaches, in % (the smallest drop this machine can show)."""
    return round(100 * max(1 - interval.low, interval.high - 1, 0.0), 1)
