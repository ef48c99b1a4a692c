"""A duet's builds at one common rate (capbench/analysis/duet_common.py): each pair's step set at the same rate on both
slots, B/A of the JVMs' CPU per request and of the p99, and their crossover intervals."""
from __future__ import annotations

from dataclasses import replace

import pytest

from capbench.analysis.duet_common import COMMON, common_pairs, console_lines, summary
from step_records import a_step


def common_step(pair: int, label: str, slot: str, cpu: float | None, p99: float, valid: bool = True):
    metrics = None if cpu is None else {slot: {"cpu_ms_per_request": cpu}, "lb": {}}
    return replace(a_step(target=slot, offered_rps=480.0, phase=COMMON, label=label, valid=valid,
                          host_metrics=metrics, latency_ms={"p99": p99}), repeat=pair)


def duet(cpu_b_over_a: float, slot2_slower: float = 1.05, pairs: int = 6, monitored: bool = True) -> list:
    """Pairs with A on node1 in odd pairs, node2 in even ones; node2's slot spends slot2_slower× per request, and
    each pair a little noise."""
    records = []
    for n in range(1, pairs + 1):
        a_slot, b_slot = ("node1", "node2") if n % 2 else ("node2", "node1")
        noise = 1 + 0.01 * (n % 3 - 1)
        cost = {"node1": 0.5, "node2": 0.5 * slot2_slower}
        records += [common_step(n, "A", a_slot, cost[a_slot] if monitored else None, 20.0),
                    common_step(n, "B", b_slot, cost[b_slot] * cpu_b_over_a * noise if monitored else None, 30.0)]
    return records


def test_each_pair_gives_both_builds_figures_and_their_ratios():
    [first, second] = common_pairs(duet(1.2, pairs=2))
    assert first["a_slot"] == "node1" and first["b_slot"] == "node2" and second["a_slot"] == "node2"
    assert first["rate_rps"] == 480.0 and first["passed"]
    assert first["a_cpu"] == 0.5 and first["b_cpu"] == pytest.approx(0.5 * 1.05 * 1.2)
    assert first["cpu_ratio"] == 1.26 and first["p99_ratio"] == 1.5


def test_the_cpu_ratio_comes_with_the_slots_effect_taken_out():
    found = summary(duet(1.2), 80)
    cpu = found["intervals"]["cpu"]
    assert found["share_pct"] == 80 and len(found["pairs"]) == 6
    assert cpu["pairs"] == 6 and cpu["low"] < 1.2 < cpu["high"] and cpu["high"] / cpu["low"] < 1.05
    assert cpu["slot_effect"] == pytest.approx(1 / 1.05, abs=0.01)  # node1's figure over node2's: it spends less
    assert found["intervals"]["p99"]["ratio"] == pytest.approx(1.5)


def test_without_pcp_only_the_p99_is_compared_and_the_console_says_what_cpu_needs():
    found = summary(duet(1.2, monitored=False), 80)
    assert found["intervals"]["cpu"] is None and found["intervals"]["p99"]["pairs"] == 6
    assert all(p["a_cpu"] is None and p["cpu_ratio"] is None for p in found["pairs"])
    lines = console_lines(found)
    assert "CPU ms per request B/A: too few pairs measured it (CPU per request needs MONITOR=on)" in lines
    assert any(line.startswith("p99 ms B/A 1.500, in [1.500, 1.500]") for line in lines)


def test_a_pair_whose_common_step_one_slot_could_not_hold_is_left_out_and_no_steps_give_none():
    records = duet(1.2, pairs=4)
    records[2] = replace(records[2], valid=False)  # pair 2's A: the load host fell behind
    assert [p["pair"] for p in common_pairs(records)] == [1, 3, 4]
    assert summary([r for r in records if r.phase != COMMON], 80) is None
