"""What a duet does before each pair (capbench/kinds/duet.py's Duet.run): the slots routed after their nodes are
re-created, and warmed up whenever a slot's settings changed, its CPU quota alone included."""
from __future__ import annotations

from types import SimpleNamespace

import pytest

from capbench.duet.builds import TUNABLE_KEYS, build
from capbench.duet.findings import DuetFindings
from capbench.kinds import duet as duet_kind

CLUSTER = {"NODE1_CPUS": "0.5", "NODE1_MEM": "768m", "NODE1_HEAP": "320m", "NODE1_GC": "auto", "NODE1_MAXCONN": "0",
           "NODE2_CPUS": "0.5", "NODE2_MEM": "768m", "NODE2_HEAP": "320m", "NODE2_GC": "auto", "NODE2_MAXCONN": "0",
           **{key: "10" for key in TUNABLE_KEYS}}


class Recorded(duet_kind.Duet):
    """The duet's loop with its measuring replaced by a log of what it was asked to do."""

    def __init__(self):
        self.log: list[str] = []

    def route(self, bench):
        self.log.append("route")

    def warm_up(self, bench, found, assignment):
        self.log.append("warm " + " ".join(f"{node}={b.name}" for node, b in assignment.items()))

    def pair(self, bench, found, number, assignment):
        self.log.append(f"pair {number}")
        return SimpleNamespace(as_dict=dict)

    def profile(self, bench, found, number, assignment, made):
        self.log.append(f"profile after pair {number}: " + " ".join(f"{n}={b.name}" for n, b in assignment.items()))


def run(monkeypatch, b_words: str, quotas_live: bool, profiling: bool = False, blocks: int = 0) -> list[str]:
    made: list[tuple] = []
    monkeypatch.setattr(duet_kind, "builds", lambda settings: (build("A", ""), build("B", b_words)))
    monkeypatch.setattr(duet_kind, "backend", lambda: SimpleNamespace(
        recreate=lambda nodes, env, fresh: made.append(nodes), set_cpus=lambda node, cpus: quotas_live,
        live_cpus=quotas_live))
    kind = Recorded()
    monkeypatch.setattr(duet_kind.profile_step, "load_recorders", lambda nodes: kind.log.append(f"load {nodes}"))

    def run_blocks(kind_, bench_, found, a, b, twins):
        kind.log.append("blocks")
        return {"node1": b, "node2": a}
    monkeypatch.setattr(duet_kind.duet_blocks, "run", run_blocks)
    bench = SimpleNamespace(settings=SimpleNamespace(kinds={"duet": SimpleNamespace(pairs=3, blocks=blocks)}), cluster_env={},
                            cluster_settings=lambda: dict(CLUSTER), with_monitoring_paused=lambda act: act(),
                            steps=SimpleNamespace(progress=SimpleNamespace(whole_lines=False)), profiling=profiling)
    kind.run(bench, DuetFindings())
    return kind.log


def test_a_profiled_duet_loads_the_recorders_before_its_last_pair_and_profiles_both_slots_after_it(monkeypatch):
    # Loading a JVM's recorder slows it for about half a minute: a warm-up absorbs it, on both slots.
    assert run(monkeypatch, "CPUS=0.15", quotas_live=True, profiling=True)[-4:] == [
        "load ('node1', 'node2')", "warm node1=A node2=B", "pair 3", "profile after pair 3: node1=A node2=B"]
    # The same build on both slots is placed once and warmed once, and again before the last pair when profiled.
    assert run(monkeypatch, "", quotas_live=True, profiling=True) == [
        "route", "warm node1=A node2=B", "pair 1", "pair 2", "load ('node1', 'node2')", "warm node1=A node2=B",
        "pair 3", "profile after pair 3: node1=A node2=B"]


def test_a_profiled_duet_with_blocks_loads_the_recorders_after_them_and_profiles_as_they_left_the_slots(
        monkeypatch):
    # The blocks' windows are measured without the recorders' cost; the profile follows the last block.
    assert run(monkeypatch, "CPUS=0.15", quotas_live=True, profiling=True, blocks=6)[-5:] == [
        "pair 3", "blocks", "load ('node1', 'node2')", "warm node1=B node2=A", "profile after pair 3: node1=B node2=A"]


def test_builds_swapped_by_their_quotas_alone_are_warmed_again_without_new_routes(monkeypatch):
    # In CI (2026-11-27) the slot that had run B on 0.15 of a core served A at 200/s in the next pair, against
    # 763 on the other slot: its JVM had compiled little on the small quota, and the pair started unwarmed.
    assert run(monkeypatch, "CPUS=0.15", quotas_live=True) == [
        "route", "warm node1=A node2=B", "pair 1", "warm node1=B node2=A", "pair 2", "warm node1=A node2=B", "pair 3"]


@pytest.mark.parametrize("b_words, quotas_live", [("CPUS=0.15", False), ("TOMCAT_MAX_THREADS=8", True)])
def test_re_created_slots_are_routed_and_warmed_each_pair(monkeypatch, b_words, quotas_live):
    assert run(monkeypatch, b_words, quotas_live) == ["route", "warm node1=A node2=B", "pair 1"] + [
        "route", "warm node1=B node2=A", "pair 2", "route", "warm node1=A node2=B", "pair 3"]


def test_the_same_build_on_both_slots_is_placed_and_warmed_once(monkeypatch):
    assert run(monkeypatch, "", quotas_live=True) == ["route", "warm node1=A node2=B", "pair 1", "pair 2", "pair 3"]


def test_a_warm_up_with_both_capacities_known_holds_at_most_max_windows(monkeypatch):
    # A slot on a small CPU quota is throttled in bursts: its mean time per request jumps between windows (3-14 ms
    # at 57/s on 0.15 of a core, 2026-11-27) and two windows in a row may never agree.
    from capbench.engine.warmup import MAX_WINDOWS
    windows = []

    def together(bench, found, number, assignment, asks, duration_s=None):
        windows.append({ask.slot: ask.rate for ask in asks})
        jumpy = 3.0 if len(windows) % 2 else 14.0
        return {ask.slot: SimpleNamespace(passed=True, result=SimpleNamespace(mean_service_ms=jumpy)) for ask in asks}

    monkeypatch.setattr(duet_kind, "together", together)
    bench = SimpleNamespace(settings=SimpleNamespace(warmup_s=2, start_rate=50.0), driver=SimpleNamespace(min_step_s=1),
                            capacity={"A": 760.0, "B": 80.0}.get, steps=SimpleNamespace(warmups=[]))
    duet_kind.Duet().warm_up(bench, DuetFindings(), {"node1": build("B", "CPUS=0.15"), "node2": build("A", "")})
    assert len(windows) == MAX_WINDOWS and windows[0] == {"node1": 56.0, "node2": 532.0}  # held at HOLD of each
    assert bench.steps.warmups[0]["steady"] is False
