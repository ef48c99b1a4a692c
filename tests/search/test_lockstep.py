"""Searches stepped together (capbench/search/lockstep.py) against simulated slots: each slot's search finds what it would
alone, every set of steps is measured at once, and a slot whose search ended keeps its load until the other's
ends."""
from __future__ import annotations

import pytest

from capbench.search.capacity import find_capacity
from capbench.search.lockstep import COMPANION, REOPEN_START, REOPENS, SearchPlan, companion_rate, search_together
from step_records import Verdict


class Machine:
    """Slots with fixed capacities; records every set of steps measured together."""

    def __init__(self, capacities: dict[str, float]):
        self.capacities = capacities
        self.sets: list[list[tuple[str, float, str]]] = []

    def __call__(self, asks) -> dict[str, Verdict]:
        self.sets.append(sorted((a.slot, a.rate, a.phase) for a in asks))
        return {a.slot: Verdict(a.rate <= self.capacities[a.slot]) for a in asks}


PLAN = SearchPlan(start_rate=50, growth=2, precision_pct=5, max_steps=40)


def test_each_slot_finds_what_it_would_find_alone():
    machine = Machine({"node1": 480.0, "node2": 410.0})
    outcomes = search_together({"node1": PLAN, "node2": PLAN}, machine)
    for slot, capacity in machine.capacities.items():
        alone = find_capacity(lambda rate, phase, c=capacity: Verdict(rate <= c), 50, 2, 5, 40)
        assert outcomes[slot].capacity == alone.capacity and outcomes[slot].tried == alone.tried


def test_every_step_is_measured_beside_the_others_and_an_ended_search_keeps_its_slot_loaded():
    machine = Machine({"node1": 900.0, "node2": 200.0})
    outcomes = search_together({"node1": PLAN, "node2": PLAN}, machine)
    searched = {slot: [(rate, phase) for rate, phase, _ in outcomes[slot].tried] for slot in ("node1", "node2")}
    shorter, longer = sorted(searched, key=lambda s: len(searched[s]))
    for n, measured in enumerate(machine.sets):
        slots = [slot for slot, _, _ in measured]
        assert slots == ["node1", "node2"], measured  # never one slot alone while both have work
        own = {slot: (rate, phase) for slot, rate, phase in measured}
        assert own[longer] == searched[longer][n]
        if n < len(searched[shorter]):
            assert own[shorter] == searched[shorter][n]
        else:  # its search ended: loaded one precision step below its capacity, not counted
            assert own[shorter] == (round(outcomes[shorter].capacity / 1.05, 1), COMPANION)
    assert len(machine.sets) == len(searched[longer])


def test_a_failure_inside_a_step_ends_every_search_and_is_raised():
    def broken(asks):
        raise RuntimeError("node2 went down")

    with pytest.raises(RuntimeError, match="node2 went down"):
        search_together({"node1": PLAN, "node2": PLAN}, broken)


class Slowing(Machine):
    """node1's capacity drops by `drop` each time one of its companion steps is measured, `times` times: the
    machine slowed after its search ended (another worker's bench began)."""

    def __init__(self, capacities: dict[str, float], drop: float, times: int):
        super().__init__(capacities)
        self.drop, self.times = drop, times

    def __call__(self, asks) -> dict[str, Verdict]:
        if self.times and any(a.slot == "node1" and a.phase == COMPANION for a in asks):
            self.capacities["node1"] -= self.drop
            self.times -= 1
        return super().__call__(asks)


LONG = SearchPlan(start_rate=50, growth=1.1, precision_pct=1, max_steps=200)  # a search that outlasts node1's


def test_a_search_whose_companions_keep_failing_is_opened_again_below_and_ends_on_the_same_minutes():
    machine = Slowing({"node1": 200.0, "node2": 900.0}, drop=60, times=1)
    set_aside = []
    outcomes = search_together({"node1": PLAN, "node2": LONG}, machine,
                               lambda slot, outcome: set_aside.append((slot, outcome.capacity)))
    # node1's first search found about 200; then the machine held 140 and its companions failed twice at it:
    # opened again from 0.8 of it, the search found what the slower machine holds, and its companions passed.
    [(slot, first)] = set_aside
    assert slot == "node1" and 190 <= first <= 200
    companions = [rate for measured in machine.sets for s, rate, phase in measured if s == "node1" and phase == COMPANION]
    assert companions[:2] == [round(first / 1.05, 1)] * 2 and len(companions) > 2
    assert outcomes["node1"].tried[0][0] == round(first * REOPEN_START, 1)
    assert 140 * 0.95 <= outcomes["node1"].capacity <= 140
    assert set(companions[2:]) == {companion_rate(outcomes["node1"], PLAN)}


def test_a_search_is_opened_again_at_most_reopens_times():
    machine = Slowing({"node1": 400.0, "node2": 5000.0}, drop=30, times=100)
    set_aside = []
    outcomes = search_together({"node1": PLAN, "node2": LONG}, machine,
                               lambda slot, outcome: set_aside.append(slot))
    assert set_aside == ["node1"] * REOPENS and outcomes["node1"].capacity and outcomes["node2"].capacity


class Wobbling(Machine):
    """Once node1's search has ended, it holds 194/s for two sets of steps, then 200/s for two, and so on: a
    steady machine's noise, within the search's precision."""

    companions = 0

    def __call__(self, asks) -> dict[str, Verdict]:
        if any(a.slot == "node1" and a.phase == COMPANION for a in asks):
            self.capacities["node1"] = 194.0 if self.companions // 2 % 2 == 0 else 200.0
            self.companions += 1
        return super().__call__(asks)


def test_noise_within_the_precision_does_not_open_a_search_again():
    machine = Wobbling({"node1": 200.0, "node2": 5000.0})
    set_aside = []
    outcomes = search_together({"node1": PLAN, "node2": LONG}, machine,
                               lambda slot, outcome: set_aside.append(slot))
    # A companion at the capacity itself (above 194) would fail twice in a row in every low stretch.
    assert 194 < outcomes["node1"].capacity <= 200
    companions = [rate for measured in machine.sets for s, rate, phase in measured if s == "node1" and phase == COMPANION]
    assert len(companions) > 4 and set(companions) == {companion_rate(outcomes["node1"], PLAN)}
    assert set_aside == []
