"""A duet's verdict: build B against build A from pairs measured together (capbench/duet/builds.py), each pair two capacity
searches stepped at the same instants on twin slots, the builds on swapped slots from one pair to the next.

Each pair gives one ratio B/A, measured while both saw the same machine: a machine that slows down slows both, and
the ratio stays. The search knows a capacity only as a bracket (the highest rate that passed, the lowest that
failed above it); the pair's ratio is that of the brackets' middles. Two searches stepped together often end in
the same bracket (an A/A duet gave B/A = 1.000 five times: both passed 751.5/s and failed 791/s), so the spread
of the ratios cannot hold the brackets' width: the interval is widened by it, as far as the brackets allow
the true ratio to lie from the middles' (a search's PRECISION_PCT sets that width). But two brackets are found at
different instants; the steps where one slot passed and the other failed at the same instants bound the ratio
whatever the machine did (capbench/analysis/same_instant.py): the pair's ratio is moved inside those bounds, and its
reach narrowed to them.

The slots are twins, not clones: a JVM keeps the code its compiler happened to make for as long as it runs, and
one slot can measure several per cent faster than the other for a whole duet (docs/findings.md, why the duet is built as it is). Swapping the builds between pairs
makes this an AB/BA crossover, analysed as one (Jones & Kenward, "Design and Analysis of Cross-Over Trials"): on
log ratios, the slot's effect is half the difference between the two orientations' means and cancels from their
average, which estimates the change; its interval is Student's t with n − 2 degrees of freedom from the spread
within each orientation (90 % two-sided). The slot's effect is reported beside it. The verdict is one of
non-inferiority with the tolerance the user allows (GATE_DROP_PCT): B FELL when the whole interval lies below
1 − tolerance, HOLDS when the whole interval lies at or above it, and otherwise the pairs CANNOT TELL.

The number of pairs is fixed before the run (DUET_PAIRS), not extended until a verdict comes: adding pairs until
the interval clears the line would call a drop more often than the interval's level says.

An A/A duet (the same build on both slots) measures what this machine can resolve: its band, the largest distance
of its interval from 1, is the smallest drop a duet here can show; a tolerance below it is refused."""
from __future__ import annotations

import math
import statistics
from dataclasses import dataclass

from capbench.analysis import same_instant

CONFIDENCE = 0.90
MIN_PAIRS = 3  # the crossover's interval needs a degree of freedom left after the change and the slot's effect
HOLDS, FELL, CANNOT_TELL = "holds", "fell", "cannot tell"


@dataclass(frozen=True)
class SlotResult:
    """One build's search in a pair: its slot (the node), the capacity and the lowest rate that failed above it."""
    slot: str
    capacity_rps: float | None
    lowest_failure_rps: float | None

    @property
    def middle(self) -> float | None:
        """The middle of the bracket; None without one (no capacity, or nothing failed above it: a lower bound)."""
        if self.capacity_rps is None or self.lowest_failure_rps is None:
            return None
        return (self.capacity_rps + self.lowest_failure_rps) / 2


@dataclass(frozen=True)
class Pair:
    number: int
    a: SlotResult
    b: SlotResult
    instants: same_instant.Range | None = None  # what the steps measured on both slots at once allow

    @property
    def bracket_ratio(self) -> float | None:
        """B/A of the brackets' middles; None when either search found no bracket."""
        if self.a.middle is None or self.b.middle is None:
            return None
        return self.b.middle / self.a.middle

    @property
    def known(self) -> tuple[float, float]:
        """Where B/A lies: each capacity in its bracket puts it in [B's capacity / A's failure, B's failure / A's
        capacity], narrowed by the same-instant steps (capbench/analysis/same_instant.py)."""
        bracket = (self.b.capacity_rps / self.a.lowest_failure_rps, self.b.lowest_failure_rps / self.a.capacity_rps)
        return same_instant.combined(bracket, self.instants)

    @property
    def ratio(self) -> float | None:
        """The brackets' B/A, moved into what the same-instant steps allow; None without a bracket on each side."""
        middle = self.bracket_ratio
        if middle is None:
            return None
        low, high = self.known
        return min(max(middle, low), high)

    @property
    def reach(self) -> tuple[float, float]:
        """How far below and above `ratio` the ratio of the true capacities may lie, as factors."""
        low, high = self.known
        return low / self.ratio, high / self.ratio

    @staticmethod
    def from_dict(d: dict) -> Pair:
        return Pair(d["pair"], SlotResult(d["a_slot"], d["a_rps"], d["a_lowest_failure_rps"]),
                    SlotResult(d["b_slot"], d["b_rps"], d["b_lowest_failure_rps"]),
                    same_instant.Range.from_dict(d.get("same_instant")))

    def as_dict(self) -> dict:
        ratio, middle = self.ratio, self.bracket_ratio
        return {"pair": self.number, "a_slot": self.a.slot, "b_slot": self.b.slot,
                "a_rps": self.a.capacity_rps, "b_rps": self.b.capacity_rps,
                "a_lowest_failure_rps": self.a.lowest_failure_rps, "b_lowest_failure_rps": self.b.lowest_failure_rps,
                "bracket_ratio": round(middle, 4) if middle is not None else None,
                "same_instant": self.instants.as_dict() if self.instants else None,
                "ratio": round(ratio, 4) if ratio is not None else None}


@dataclass(frozen=True)
class Interval:
    ratio: float  # the change: B/A with the slots' effect taken out
    low: float
    high: float
    confidence: float
    pairs: int
    slot_effect: float  # how much faster the first slot ran than the second (1.04: 4 % faster)


def crossover_interval(pairs: list[Pair], confidence: float = CONFIDENCE) -> Interval:
    """B/A and its t-interval from pairs with a ratio, at least one with A on each slot and MIN_PAIRS in all."""
    return crossover([(p.a.slot, p.ratio, p.reach) for p in pairs if p.ratio is not None], confidence)


def crossover(ratios: list[tuple[str, float, tuple[float, float]]], confidence: float = CONFIDENCE) -> Interval:
    """The crossover's interval from (A's slot, B/A, its reach) of each pair: any paired ratio of the two builds
    whose pairs swapped slots (capacities, or CPU per request at a common rate, whose reach is (1, 1))."""
    by_slot: dict[str, list[float]] = {}
    reaches: dict[str, list[tuple[float, float]]] = {}
    for a_slot, ratio, reach in ratios:
        by_slot.setdefault(a_slot, []).append(math.log(ratio))
        reaches.setdefault(a_slot, []).append(reach)
    n = sum(len(v) for v in by_slot.values())
    if n < MIN_PAIRS or len(by_slot) != 2:
        raise ValueError(f"{n} with a ratio, A on {len(by_slot)} slot(s): a verdict needs at least "
                         f"{MIN_PAIRS}, with A on each slot")
    (first, one), (_, other) = sorted(by_slot.items())
    means = [statistics.fmean(one), statistics.fmean(other)]
    change = sum(means) / 2
    spread = sum((x - means[0]) ** 2 for x in one) + sum((x - means[1]) ** 2 for x in other)
    error = math.sqrt(spread / (n - 2) / 4 * (1 / len(one) + 1 / len(other)))
    from scipy import stats  # here: make help lists the kinds (this module's constants) with the standard library
    reach = float(stats.t.ppf(0.5 + confidence / 2, n - 2)) * error
    # The brackets: the change is an average of the pairs' log ratios (half of each orientation's mean), so each
    # pair's bracket can move it by its own share of its reach, at most; the interval is widened by that much.
    below, above = (sum(statistics.fmean(math.log(r[side]) for r in reaches[slot_]) for slot_ in reaches) / 2
                    for side in (0, 1))
    # A on the first slot gives a lower B/A when that slot is the faster: its effect is half the difference.
    slot = math.exp((means[1] - means[0]) / 2)
    return Interval(math.exp(change), math.exp(change - reach + below), math.exp(change + reach + above),
                    confidence, n, slot)


@dataclass(frozen=True)
class DuetVerdict:
    verdict: str
    message: str
    interval: Interval | None
    floor: float  # 1 − tolerance: B may lose this much and hold

    def as_dict(self) -> dict:
        i = self.interval
        return {"verdict": self.verdict, "message": self.message, "floor": self.floor,
                "ratio": round(i.ratio, 4) if i else None,
                "interval": [round(i.low, 4), round(i.high, 4)] if i else None,
                "confidence": i.confidence if i else None, "slot_effect": round(i.slot_effect, 4) if i else None}


def judge(pairs: list[Pair], tolerance_pct: float) -> DuetVerdict:
    """Non-inferiority of B against A at `tolerance_pct` from the searches' pairs (module docstring)."""
    missing = sum(p.ratio is None for p in pairs)
    try:
        interval = crossover_interval(pairs)
    except ValueError as problem:
        return cannot_tell(problem, missing, len(pairs), "pairs", tolerance_pct)
    return decide(interval, tolerance_pct, "pairs", missing)


def without_figure(missing: int, total: int, units: str) -> str:
    """What a verdict says of the units (pairs, blocks) left out for want of a ratio: a build whose search found
    no capacity, a block whose windows all failed."""
    return f"{missing} of {total} {units} without a ratio on one side, left out" if missing else ""


def cannot_tell(problem: ValueError, missing: int, total: int, units: str, tolerance_pct: float) -> DuetVerdict:
    why = without_figure(missing, total, units)
    return DuetVerdict(CANNOT_TELL, f"{problem}" + (f" ({why})" if why else ""), None, 1 - tolerance_pct / 100)


def decide(interval: Interval, tolerance_pct: float, units: str, missing: int = 0) -> DuetVerdict:
    """FELL when the interval lies wholly below 1 − tolerance, HOLDS when wholly at or above it, else CANNOT
    TELL; the units left out without a ratio are named."""
    floor = 1 - tolerance_pct / 100
    left_out = without_figure(missing, interval.pairs + missing, units)
    said = (f"B/A {interval.ratio:.3f}, in [{interval.low:.3f}, {interval.high:.3f}] at "
            f"{interval.confidence:.0%} over {interval.pairs} {units} (the slot's effect {interval.slot_effect:.3f} "
            "taken out" + (f"; {left_out}" if left_out else "") + ")")
    if interval.high < floor:
        return DuetVerdict(FELL, f"{said}: wholly below {floor:.3f} (a drop beyond {tolerance_pct:g} %)", interval,
                           floor)
    if interval.low >= floor:
        return DuetVerdict(HOLDS, f"{said}: wholly at or above {floor:.3f} (no drop beyond {tolerance_pct:g} %)",
                           interval, floor)
    return DuetVerdict(CANNOT_TELL, f"{said}: it spans {floor:.3f}, the line a {tolerance_pct:g} % drop draws",
                       interval, floor)


def interval_dict(interval: Interval) -> dict:
    return {"ratio": round(interval.ratio, 4), "low": round(interval.low, 4), "high": round(interval.high, 4),
            "confidence": interval.confidence, "pairs": interval.pairs, "slot_effect": round(interval.slot_effect, 4)}


def aa_band_pct(interval: Interval) -> float:
    """An A/A duet's band: how far from 1 its interval reaches, in % (the smallest drop this machine can show)."""
    return round(100 * max(1 - interval.low, interval.high - 1, 0.0), 1)
