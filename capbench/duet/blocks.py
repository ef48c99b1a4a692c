"""make bench-duet's blocks (capbench/analysis/duet_blocks.py says why): after the pairs' searches, DUET_BLOCKS blocks of
DUET_WINDOWS windows, each window both slots in a closed loop of DUET_CONNECTIONS connections for DUET_WINDOW_S
seconds from one start instant. A block whose orientation differs from the last swaps the builds' slots first
(capbench/duet/builds.py's Twins: the running nodes' quotas, else re-created) and warms both up again, as a pair does."""
from __future__ import annotations

import random
import time
from concurrent.futures import ThreadPoolExecutor

from capbench.analysis import duet_blocks
from capbench.duet.builds import ONE_HOST_MARGIN_S, RE_CREATED, SLOTS, Build, Twins
from capbench.duet.findings import DuetFindings
from capbench.engine.progress import say
from capbench.hosts.topology import node_port


def window_driver(bench, window_s: int):
    """The run's generator when it can run a window that short in a closed loop, else oha (wrk2 paces every
    request at a rate and calibrates for its first 10 s)."""
    from capbench.load.drivers.oha import OhaDriver  # the harness's libraries: make help lists the kinds without them
    return bench.driver if bench.driver.name == "oha" and bench.driver.min_step_s <= window_s else OhaDriver()


def run(kind, bench, found: DuetFindings, a: Build, b: Build, twins: Twins) -> dict[str, Build]:
    """The blocks, in a balanced order drawn at random (its seed recorded), each kept in the duet's findings
    as it is measured; returns the last block's assignment of builds to slots."""
    own = kind.own(bench.settings)
    seed = random.SystemRandom().randrange(2 ** 31)
    order = duet_blocks.orientations(own.blocks, seed)
    found.update({"block_plan": {"blocks": own.blocks, "windows": own.windows, "window_s": own.window_s,
                                 "connections": own.connections, "seed": seed, "a_on_first_slot": order}})
    driver = window_driver(bench, own.window_s)
    blocks: list[duet_blocks.Block] = []
    assignment: dict[str, Build] = {}
    for number, a_first in enumerate(order, 1):
        assignment = dict(zip(SLOTS, (a, b) if a_first else (b, a)))
        changed = twins.place(assignment)
        if changed == RE_CREATED:
            kind.route(bench)
        if changed:
            kind.warm_up(bench, found, assignment)
        block = measure_block(bench, number, assignment, own, driver, found.twin_cpus)
        blocks.append(block)
        found.blocks = [one.as_dict() for one in blocks]
        ratio = block.ratio
        say(f"block {number}/{own.blocks}: A on {block.a_slot}, B on {block.b_slot}: B/A "
            + (f"{ratio:.3f} over {len(block.kept)} windows" if ratio else "none (no window measured both)"))
    return assignment


def measure_block(bench, number: int, assignment: dict[str, Build], own, driver,
                  twin_cpus: str) -> duet_blocks.Block:
    """The block's windows, one after another with no pause: the load goes on as the machine's does."""
    from capbench.load.load_hosts import START_MARGIN_S
    routes = {slot: bench.steps.route_for(node_port(slot), build_.settings(bench.settings))
              for slot, build_ in assignment.items()}
    quotas = {slot: float(build_.node.get("CPUS") or twin_cpus) for slot, build_ in assignment.items()}
    windows = []
    for _ in range(own.windows):
        start_at = time.time() + (START_MARGIN_S if len(bench.loads.hosts) > 1 else ONE_HOST_MARGIN_S)

        def one(slot: str):
            return bench.steps.measure(slot, number, 0, duet_blocks.WINDOW, label=assignment[slot].name,
                                       route=routes[slot], start_at=start_at, duration_s=own.window_s,
                                       closed_connections=own.connections, settle=False, node_cpus=quotas,
                                       driver=driver)

        with ThreadPoolExecutor(len(SLOTS)) as pool:
            records = dict(zip(SLOTS, pool.map(one, SLOTS)))
        rates = {assignment[slot].name: duet_blocks.goodput(r.result.achieved_rps, r.result.failure_pct)
                 if r.valid else None for slot, r in records.items()}
        windows.append(duet_blocks.Window(rates["A"], rates["B"]))
    a_slot = next(slot for slot, build_ in assignment.items() if build_.name == "A")
    b_slot = next(slot for slot in assignment if slot != a_slot)
    return duet_blocks.Block(number, a_slot, b_slot, tuple(windows))
