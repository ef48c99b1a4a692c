"""What a duet found (bench-duet's findings, summary.json's `duet`): the builds, each pair's capacities, the
blocks' throughputs, their intervals, the common rate's figures and the profiles' difference. The pairs and
blocks keep the forms their own classes write and read (capbench/analysis/duet_verdict.py Pair, capbench/analysis/duet_blocks.py
Block); the gate reads them back through those."""
from __future__ import annotations

from dataclasses import dataclass

from capbench.rundata.findings import Findings
from capbench.rundata.records import doc


@dataclass
class BuildRecord:
    """One side of the duet as its words gave it (capbench/duet/builds.py)."""
    name: str = doc("A (the baseline) or B (the candidate)", default="")
    text: str = doc("its DUET_A or DUET_B words; empty: as configured", default="")
    variant: str | None = doc("its Grinder variant, where it sets one", default=None)
    work_pct: int | None = doc("its WORK_PCT, where it sets one", default=None)
    node: dict[str, str] = doc("its node settings (CPUS, MEM, HEAP, GC, connector and pool settings)",
                               default_factory=dict)
    war: str | None = doc("its WAR, where it brings one", default=None)
    jar: str | None = doc("its executable JAR, where it brings one", default=None)


@dataclass
class BlockPlan:
    """How the blocks were measured."""
    blocks: int = doc("DUET_BLOCKS", default=0)
    windows: int = doc("DUET_WINDOWS: windows in each block", default=0)
    window_s: int = doc("DUET_WINDOW_S: each window's length", default=0)
    connections: int = doc("DUET_CONNECTIONS: each slot's closed-loop connections", default=0)
    seed: int | None = doc("the seed of the blocks' random order", default=None)
    a_on_first_slot: list[bool] = doc("each block's orientation: A on the first slot", default_factory=list)


@dataclass
class DuetFindings(Findings):
    """bench-duet: build B against build A, measured together on twin slots."""
    kind = "duet"
    builds: list[BuildRecord] = doc("A and B", default_factory=list)
    slots: list[str] = doc("the twin slots (node1, node2)", default_factory=list)
    twin_cpus: str | None = doc("the slots' CPU quota where a build sets none (NODE1_CPUS as configured)",
                                default=None)
    pairs: list[dict] = doc("each pair's capacities, slots, brackets and same-instant bounds "
                            "(capbench/analysis/duet_verdict.py, Pair.as_dict)", default_factory=list)
    guess: dict[str, float] = doc("per build, where its warm-up's climb stopped: its first search's start before "
                                  "a capacity is known", default_factory=dict)
    block_plan: BlockPlan | None = doc("how the blocks were measured (DUET_BLOCKS above 0)", default=None)
    blocks: list[dict] = doc("each block's windows and B/A (capbench/analysis/duet_blocks.py, Block.as_dict)",
                             default_factory=list)
    interval: dict | None = doc("the pairs' B/A: ratio, low, high, confidence, pairs, slot_effect "
                                "(duet_verdict.interval_dict); None: too few pairs", default=None)
    blocks_interval: dict | None = doc("the blocks' B/A in the same form: what a duet gate judges; None: too few "
                                       "blocks", default=None)
    common: dict | None = doc("at a common rate: share_pct, each pair's p99 and CPU per request, their "
                              "intervals (capbench/analysis/duet_common.py)", default=None)
    profile_problem: str | None = doc("JFR=on: why the builds could not be profiled", default=None)
    profile_difference: dict | None = doc("JFR=on: samples per request of each build and what grew "
                                          "(capbench/duet/profile.py)", default=None)
