"""What a duet's steps measured at the same instants say about B/A, whatever the machine's speed did meanwhile.

At a step where one slot passed and the other failed, both slots were loaded during the same seconds: when A
passed at rate a and B failed at rate b, B's capacity then lay below b and A's at or above a, so B/A < b/a; the
other way round, B/A > b/a. A ratio of two brackets compares capacities found at different instants (two searches
walk different paths), and a machine that slows between them moves it far (docs/findings.md, why the duet is built as it is). Steps where both passed, or both
failed, say nothing of the ratio; nor do steps a slot could not judge (invalid, or windows that disagreed).

A pass or a failure near a capacity is itself a noisy event, so bounds may contradict one another: the range
kept is the one stretch of ratios that contradicts the fewest of them, and none when two stretches apart tie."""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Together:
    """One step measured on both slots at once: each build's rate and whether its slot met the SLO."""
    a_rps: float
    a_passed: bool
    b_rps: float
    b_passed: bool


@dataclass(frozen=True)
class Range:
    """Where B/A lies by the same-instant steps: above `low`, below `high` (None: unbounded on that side)."""
    low: float | None
    high: float | None
    bounds: int  # steps that bound the ratio
    contradicted: int  # of which the range contradicts this many

    def as_dict(self) -> dict:
        return {"low": _rounded(self.low), "high": _rounded(self.high), "bounds": self.bounds,
                "contradicted": self.contradicted}

    @staticmethod
    def from_dict(d: dict | None) -> Range | None:
        return None if d is None else Range(d["low"], d["high"], d["bounds"], d["contradicted"])


def _rounded(x: float | None) -> float | None:
    return None if x is None else round(x, 4)


def bounds(steps: list[Together]) -> tuple[list[float], list[float]]:
    """The lower bounds (B passed where A failed) and the upper bounds (A passed where B failed) on B/A."""
    lows = [s.b_rps / s.a_rps for s in steps if s.b_passed and not s.a_passed]
    highs = [s.b_rps / s.a_rps for s in steps if s.a_passed and not s.b_passed]
    return lows, highs


def same_instant_range(steps: list[Together]) -> Range | None:
    """The stretch of B/A that contradicts the fewest bounds; None when no step bounds it, or when the fewest
    contradictions are met in stretches apart (the steps cannot say which)."""
    lows, highs = bounds(steps)
    if not lows and not highs:
        return None
    edges = sorted(set(lows + highs))
    stretches = list(zip([None, *edges], [*edges, None]))  # the open stretches between neighbouring edges

    def contradicted(below: float | None, above: float | None) -> int:
        # a ratio inside (below, above) breaks every lower bound at or above it and every upper bound at or below
        return (sum(low >= above for low in lows) if above is not None else 0) + \
            (sum(high <= below for high in highs) if below is not None else 0)

    counts = [contradicted(*stretch) for stretch in stretches]
    fewest = min(counts)
    best = [i for i, count in enumerate(counts) if count == fewest]
    if best[-1] - best[0] != len(best) - 1:
        return None
    return Range(stretches[best[0]][0], stretches[best[-1]][1], len(lows) + len(highs), fewest)


def combined(bracket: tuple[float, float], known: Range | None) -> tuple[float, float]:
    """Where B/A lies by both the brackets (`bracket`: lowest, highest) and the same-instant steps: their
    overlap; where the two disagree, the same-instant side, as wide as the bracket where it is unbounded."""
    low, high = bracket
    if known is None:
        return low, high
    floor = known.low if known.low is not None else 0.0
    ceiling = known.high if known.high is not None else float("inf")
    if max(low, floor) <= min(high, ceiling):
        return max(low, floor), min(high, ceiling)
    width = high / low
    if ceiling < low:  # the brackets put B/A above what the same instants allow
        return max(floor, ceiling / width), ceiling
    return floor, min(ceiling, floor * width)
