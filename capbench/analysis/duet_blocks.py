"""A duet's continuous figure: the two builds' throughputs at the same fixed concurrency, measured together.

A capacity search knows a capacity only as a bracket on a grid of rates, so a pair's ratio B/A comes out as one of
a few values (an A/A duet's pairs: 1.000, 0.971, 1.030; a quota 10 % smaller: 0.942, 0.868, 0.942, 0.868): the
grid, not the machine, sets how small a change it can see. Here both slots are driven from one start instant by
the same closed loop (DUET_CONNECTIONS connections each, each sending its next request when the last is answered,
enough to keep a node's CPU busy), in short windows; a window's figure is each slot's goodput (good responses a
second), continuous, and its log ratio B/A is measured while both saw the same seconds of the same machine.

The windows come in orientation blocks: in a block A runs on one slot and B on the other, and the next block may
swap them. The blocks' orientations are balanced and randomised in couples (each couple of blocks one AB and one
BA, in an order drawn anew: a machine that drifts over the run favours neither orientation), as the randomised
multiple interleaved trials of Abedi et al. ask. A block's figure is the mean of its windows' log ratios; the
blocks are judged by the same AB/BA crossover as the searches' pairs (capbench/analysis/duet_verdict.py), with no bracket
term: a block's ratio is measured, not bracketed."""
from __future__ import annotations

import math
import random
import statistics
from dataclasses import dataclass

from capbench.analysis import duet_verdict

WINDOW = "window"  # the phase of a block's measured windows


def orientations(blocks: int, seed: int) -> list[bool]:
    """Whether A runs on the first slot in each block: one of each orientation per couple of blocks, in an order
    drawn from `seed` (recorded, so a run can be followed again); an odd last block draws its own."""
    draw = random.Random(seed)
    order: list[bool] = []
    for _ in range(blocks // 2):
        first = draw.random() < 0.5
        order += [first, not first]
    if blocks % 2:
        order.append(draw.random() < 0.5)
    return order


def goodput(achieved_rps: float, failure_pct: float) -> float:
    """Good responses a second: the responses a second less the share that failed."""
    return achieved_rps * max(0.0, 1 - failure_pct / 100)


@dataclass(frozen=True)
class Window:
    """One window of a block: each build's goodput; None when a slot's step was not valid (its figure is not
    kept)."""
    a_rps: float | None
    b_rps: float | None

    @property
    def log_ratio(self) -> float | None:
        if not self.a_rps or not self.b_rps:
            return None
        return math.log(self.b_rps / self.a_rps)

    def as_dict(self) -> dict:
        return {"a_rps": self.a_rps, "b_rps": self.b_rps}


@dataclass(frozen=True)
class Block:
    number: int
    a_slot: str
    b_slot: str
    windows: tuple[Window, ...]

    @property
    def kept(self) -> list[float]:
        return [w.log_ratio for w in self.windows if w.log_ratio is not None]

    @property
    def ratio(self) -> float | None:
        """B/A of the block: the geometric mean of its windows' ratios; None when no window measured both."""
        kept = self.kept
        return math.exp(statistics.fmean(kept)) if kept else None

    @property
    def spread(self) -> float | None:
        """How far its windows' ratios scattered: their log ratios' standard deviation, as a factor."""
        kept = self.kept
        return math.exp(statistics.stdev(kept)) if len(kept) > 1 else None

    def as_dict(self) -> dict:
        ratio, spread = self.ratio, self.spread
        return {"block": self.number, "a_slot": self.a_slot, "b_slot": self.b_slot,
                "windows": [w.as_dict() for w in self.windows],
                "ratio": round(ratio, 4) if ratio is not None else None,
                "window_spread": round(spread, 4) if spread is not None else None}

    @staticmethod
    def from_dict(d: dict) -> Block:
        return Block(d["block"], d["a_slot"], d["b_slot"],
                     tuple(Window(w["a_rps"], w["b_rps"]) for w in d["windows"]))


def interval(blocks: list[Block]) -> duet_verdict.Interval:
    """B/A over the blocks with a ratio, by the crossover (ValueError when too few, or A on one slot only)."""
    return duet_verdict.crossover([(b.a_slot, b.ratio, (1.0, 1.0)) for b in blocks if b.ratio is not None])


def judge(blocks: list[Block], tolerance_pct: float) -> duet_verdict.DuetVerdict:
    """Non-inferiority of B at `tolerance_pct` from the blocks (duet_verdict.decide)."""
    missing = sum(b.ratio is None for b in blocks)
    try:
        found = interval(blocks)
    except ValueError as problem:
        return duet_verdict.cannot_tell(problem, missing, len(blocks), "blocks", tolerance_pct)
    return duet_verdict.decide(found, tolerance_pct, "blocks", missing)
