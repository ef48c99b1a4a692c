"""The duet's continuous figure (capbench/analysis/duet_blocks.py): blocks of windows at one concurrency, their order
balanced in couples and drawn at random, each block's ratio the geometric mean of its windows', judged by the
crossover with no bracket term; on blocks written here."""
from __future__ import annotations

import math
import random

import pytest

from capbench.analysis.duet_blocks import Block, Window, goodput, interval, judge, orientations
from capbench.analysis.duet_verdict import CANNOT_TELL, FELL, HOLDS


def block(number: int, a_first: bool, ratios: list[float], a_rps: float = 800.0) -> Block:
    slots = ("node1", "node2") if a_first else ("node2", "node1")
    return Block(number, *slots, tuple(Window(a_rps, a_rps * r) for r in ratios))


@pytest.mark.parametrize("blocks", [2, 6, 7, 12])
def test_each_couple_of_blocks_holds_both_orientations_in_an_order_drawn_from_the_seed(blocks):
    order = orientations(blocks, seed=11)
    assert len(order) == blocks and order == orientations(blocks, seed=11)
    assert all(order[i] != order[i + 1] for i in range(0, blocks - 1, 2))
    # Drawn: over many seeds, both orders of a couple come first.
    assert {orientations(2, seed)[0] for seed in range(20)} == {True, False}


def test_a_block_is_the_geometric_mean_of_the_windows_that_measured_both():
    made = Block(1, "node1", "node2", (Window(800, 760), Window(800, 780), Window(None, 700), Window(800, 0.0)))
    assert made.ratio == pytest.approx(math.sqrt(0.95 * 0.975))
    assert len(made.kept) == 2 and made.spread > 1
    assert Block.from_dict(made.as_dict()) == made
    assert Block(2, "node1", "node2", (Window(None, 700),)).ratio is None


def test_goodput_leaves_the_failed_share_out():
    assert goodput(1000, 2.5) == pytest.approx(975) and goodput(1000, 150) == 0


def test_a_five_percent_drop_on_a_faster_slot_is_called_with_no_bracket_term():
    # B is 0.95 of A, node1's slot 3 % faster, each window within ±1 %: six blocks call it at 2.5 %.
    draw = random.Random(5)
    blocks = []
    for number, a_first in enumerate(orientations(6, seed=3), 1):
        slot = 1 / 1.03 if a_first else 1.03
        blocks.append(block(number, a_first, [0.95 * slot * draw.uniform(0.99, 1.01) for _ in range(4)]))
    found = interval(blocks)
    assert found.ratio == pytest.approx(0.95, abs=0.01) and found.slot_effect == pytest.approx(1.03, abs=0.01)
    assert found.high - found.low < 0.03
    said = judge(blocks, 2.5)
    assert said.verdict == FELL and "over 6 blocks" in said.message


def test_equal_builds_hold_and_too_few_blocks_cannot_tell_saying_what_was_left_out():
    blocks = [block(n, n % 2 == 1, [1.0 + 0.004 * ((n * 7) % 3 - 1)] * 3) for n in range(1, 7)]
    assert judge(blocks, 2.5).verdict == HOLDS
    few = [block(1, True, [1.0]), block(2, False, [0.99]), Block(3, "node1", "node2", (Window(None, None),))]
    said = judge(few, 2.5)
    assert said.verdict == CANNOT_TELL and "1 of 3 blocks without a ratio on one side, left out" in said.message
