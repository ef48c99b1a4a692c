"""Searches stepped together (load/lockstep.py) against simulated slots: each slot's search finds what it would
alone, every set of steps is measured at once, and a slot whose search ended keeps its load until the other's
ends."""
from __future__ import annotations

from dataclasses import dataclass

import pytest

from load.capacity_search import find_capacity
from load.lockstep import COMPANION, SearchPlan, search_together


@dataclass
class Verdict:
    passed: bool
    valid: bool = True
    invalid_reason: str | None = None
    unsteady: bool = False


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
        else:  # its search ended: loaded at its capacity, not counted
            assert own[shorter] == (outcomes[shorter].capacity, COMPANION)
    assert len(machine.sets) == len(searched[longer])


def test_a_failure_inside_a_step_ends_every_search_and_is_raised():
    def broken(asks):
        raise RuntimeError("node2 went down")

    with pytest.raises(RuntimeError, match="node2 went down"):
        search_together({"node1": PLAN, "node2": PLAN}, broken)
