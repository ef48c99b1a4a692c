"""What a duet gate can call (capbench/analysis/gate_power.py): the drop called with 80 % power from the figure's standard
error, checked against the project's own judge on simulated blocks."""
from __future__ import annotations

import math
import random

import pytest

from capbench.analysis import gate_power
from capbench.analysis.duet_blocks import Block, Window, judge, orientations
from capbench.analysis.duet_verdict import FELL


def simulated_duet(draw: random.Random, drop_pct: float, noise: float, blocks: int = 6) -> list[Block]:
    """A duet of `blocks` blocks whose true B/A is 1 − drop, the first slot 2 % faster, each block's log ratio
    off by a normal error of `noise`."""
    made = []
    for number, a_first in enumerate(orientations(blocks, draw.randrange(10 ** 6)), 1):
        slot = 1 / 1.02 if a_first else 1.02
        ratio = (1 - drop_pct / 100) * slot * math.exp(draw.gauss(0, noise))
        made.append(Block(number, *(("node1", "node2") if a_first else ("node2", "node1")), (Window(800, 800 * ratio),)))
    return made


def test_the_drop_called_with_80_percent_power_is_called_about_four_times_in_five():
    draw = random.Random(7)
    noise = 0.01
    # The figure's standard error, as a calibration measures it: from its duets' intervals.
    errors = [gate_power.standard_error(i.low, i.high, i.pairs)
              for i in (judge(simulated_duet(draw, 0, noise), 0).interval for _ in range(200))]
    se = gate_power.pooled(errors)
    smallest = gate_power.drop_called(se, 6)
    assert gate_power.power_at(se, 6, smallest, 0) == pytest.approx(0.8, abs=0.01)
    called = sum(judge(simulated_duet(draw, smallest, noise), 0).verdict == FELL for _ in range(400)) / 400
    assert called == pytest.approx(0.8, abs=0.08)
    # A tolerance moves the line: the drop called with that power grows with it.
    assert gate_power.drop_called(se, 6, 2.5) > smallest + 2.4


def test_a_drop_as_large_as_the_aa_band_is_called_far_less_than_four_times_in_five():
    # The reason the A/A band is not what a gate can call (the review): an interval around 1 − band
    # still reaches above the line often.
    draw = random.Random(3)
    band = [max(1 - i.low, i.high - 1) for i in (judge(simulated_duet(draw, 0, 0.01), 0).interval
                                                 for _ in range(200))]
    typical = 100 * sorted(band)[len(band) // 2]
    called = sum(judge(simulated_duet(draw, typical, 0.01), 0).verdict == FELL for _ in range(400)) / 400
    assert 0.3 < called < 0.75
