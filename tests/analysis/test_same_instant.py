"""What the steps measured on both slots at once say about B/A (capbench/analysis/same_instant.py), and how a pair's ratio
takes it in (capbench/analysis/duet_verdict.py's Pair), on steps written here."""
from __future__ import annotations

import pytest

from capbench.analysis.duet_verdict import Pair, SlotResult
from capbench.analysis.same_instant import Range, Together, combined, same_instant_range


def test_only_a_step_one_slot_passed_and_the_other_failed_bounds_the_ratio():
    assert same_instant_range([Together(400, True, 400, True), Together(500, False, 450, False)]) is None
    # A passed 400/s while B failed 360/s: B/A < 0.9; B passed 300/s while A failed 400/s: B/A > 0.75.
    known = same_instant_range([Together(400, True, 360, False), Together(400, False, 300, True),
                                Together(380, True, 330, True)])
    assert known == Range(0.75, 0.9, 2, 0)
    assert same_instant_range([Together(400, True, 360, False)]) == Range(None, 0.9, 1, 0)


def test_bounds_that_contradict_keep_the_stretch_that_breaks_fewest():
    # Below 0.9 twice, above 1.0 once (a lucky pass): the stretch below 0.9 breaks one bound, the others more.
    known = same_instant_range([Together(400, True, 360, False), Together(400, True, 356, False),
                                Together(400, False, 400, True), Together(400, False, 300, True)])
    assert known == Range(0.75, 0.89, 4, 1)


def test_a_tie_between_stretches_apart_says_nothing():
    # B/A > 1.1 once and < 1.0 once: below 1.0 and above 1.1 each break one bound; the steps cannot choose.
    assert same_instant_range([Together(400, False, 440, True), Together(400, True, 400, False)]) is None


def test_the_range_narrows_the_bracket_and_wins_where_they_disagree():
    assert combined((0.8, 1.0), None) == (0.8, 1.0)
    assert combined((0.8, 1.0), Range(0.85, None, 1, 0)) == (0.85, 1.0)
    # The brackets, found minutes apart, say 1.4-1.7; the same instants say below 1.12: that side, as wide as
    # the bracket.
    low, high = combined((1.4, 1.7), Range(None, 1.12, 3, 0))
    assert (low, high) == pytest.approx((1.12 * 1.4 / 1.7, 1.12))
    assert combined((0.5, 0.6), Range(0.7, 0.75, 2, 0)) == (0.7, 0.75)


def test_a_pairs_ratio_moves_inside_the_same_instant_range_and_its_reach_narrows():
    a, b = SlotResult("node1", 400, 440), SlotResult("node2", 600, 660)  # brackets: B/A 1.5, reach 1.36-1.65
    alone = Pair(1, a, b)
    held = Pair(1, a, b, Range(None, 1.12, 3, 0))
    assert alone.ratio == pytest.approx(1.5) and held.bracket_ratio == pytest.approx(1.5)
    assert held.ratio == pytest.approx(1.12)
    assert held.reach == pytest.approx((1.12 * (600 / 440) / (660 / 400) / 1.12, 1.0))
    inside = Pair(1, a, b, Range(1.45, 1.55, 2, 0))
    assert inside.ratio == pytest.approx(1.5) and inside.reach == pytest.approx((1.45 / 1.5, 1.55 / 1.5))
    assert Pair.from_dict(held.as_dict()) == Pair(1, a, b, Range(None, 1.12, 3, 0))
    assert held.as_dict()["bracket_ratio"] == 1.5 and held.as_dict()["ratio"] == 1.12


def test_the_duets_figure_draws_a_moved_pair_inside_its_range(tmp_path):
    from PIL import Image

    from capbench.duet.findings import DuetFindings
    from capbench.report.duet_figure import duet
    a, b = SlotResult("node1", 400, 440), SlotResult("node2", 600, 660)
    pairs = [Pair(1, a, b, Range(None, 1.12, 3, 0)).as_dict(), Pair(2, b, a).as_dict()]
    path = duet(DuetFindings.from_json({"pairs": pairs, "builds": [{"text": ""}, {"text": "CPUS=0.425"}]}),
                tmp_path / "duet.png", 0.9)
    assert Image.open(path).size[0] > 500  # a moved pair's error bar reaches below its ratio only: drawn, not refused


def test_a_duets_step_set_counts_only_when_both_builds_slots_were_judged():
    from types import SimpleNamespace

    from capbench.duet.builds import build
    from capbench.kinds.duet import both_judged
    from capbench.search.lockstep import Ask

    def record(passed, valid=True, unsteady=False):
        return SimpleNamespace(passed=passed, valid=valid, unsteady=unsteady)

    assignment = {"node1": build("B", ""), "node2": build("A", "")}  # B on node1 this pair
    asks = [Ask("node1", 360.0, "search"), Ask("node2", 400.0, "companion")]
    assert both_judged(assignment, asks, {"node1": record(False), "node2": record(True)}) == \
        Together(400.0, True, 360.0, False)
    assert both_judged(assignment, asks, {"node1": record(False, unsteady=True), "node2": record(True)}) is None
    assert both_judged(assignment, asks, {"node1": record(False), "node2": record(True, valid=False)}) is None
    assert both_judged(assignment, asks[:1], {"node1": record(False)}) is None  # A's slot idle (no capacity)
