"""make bench-duet: build B against build A measured together (capbench/duet/builds.py: the builds and the twin slots;
capbench/search/lockstep.py: the searches stepped together; capbench/analysis/duet_verdict.py: the interval). DUET_PAIRS pairs; in each,
A and B on the twin slots node1 and node2, searched for their capacities at the same instants, every step's
requests sent to both slots from the same start; the builds change slots from one pair to the next, so a
faster slot favours each build equally. Each pair gives the ratio of the capacities B/A. Then DUET_BLOCKS blocks
of throughput at one fixed concurrency (capbench/duet/blocks.py), whose ratio B/A make gate judges (GATE_MODE=duet):
a continuous figure, where the capacities' is quantised by the searches' grid."""
from __future__ import annotations

import math
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

from capbench.analysis import duet_blocks as analysis_blocks, duet_common, duet_verdict, same_instant
from capbench.duet import blocks as duet_blocks, profile as duet_profile, report as duet_report
from capbench.duet.builds import ONE_HOST_MARGIN_S, RE_CREATED, SLOTS, Build, Twins, build, build_rule, node_problems
from capbench.duet.findings import DuetFindings
from capbench.duet.report import shown
from capbench.engine import profile_step
from capbench.engine.kind import Kind, KindSettings, Needs, Showing
from capbench.engine.progress import say
from capbench.hosts import haproxy, topology
from capbench.hosts.backend import ClusterError, backend
from capbench.hosts.cluster_settings import routing_path
from capbench.hosts.topology import node_port
from capbench.report.sections import ReportSection
from capbench.rundata.records import read_steps
from capbench.search.lockstep import Ask, SearchPlan, search_together
from capbench.settings.bench import MAX_CONNECTIONS
from capbench.settings.fields import integer, setting

# The warm-up's climb: each window's rate this much above the last one that passed, at most MAX_CLIMB windows;
# then it holds at HOLD of the last rate that passed.
CLIMB = 1.5
MAX_CLIMB = 8
CLIMB_RECHECKS = 2  # windows added for a climb's failed window measured again
HOLD = 0.7
ROUTE_CHECK_REQUESTS = 4  # requests to each slot's own port: every one must be answered by that slot's node
ROUTE_CHECK_ATTEMPTS = 3  # a slot HAProxy took down just after it looked UP gets this many checks in all
ROUTE_RECHECK_S = 2  # HAProxy's checks (inter 300 ms, fall 2, rise 2) settle within this


@dataclass(frozen=True)
class DuetSettings(KindSettings):
    a: str = setting("DUET_A", "", build_rule(), "bench-duet and the duet gate: build A, the baseline (KEY=VALUE "
                     "words: WAR or JAR, VARIANT, CPUS, MEM, HEAP, GC, a connector or pool setting such as "
                     "TOMCAT_MAX_THREADS; empty: as configured)")
    b: str = setting("DUET_B", "", build_rule(), "build B, the candidate, in the same words (empty: as configured, "
                     "an A/A duet)")
    pairs: int = setting("DUET_PAIRS", "2", integer(1, 20),
                         "pairs of capacity searches (A and B together, slots swapped each pair): each build's "
                         "capacity; with DUET_BLOCKS=0 their ratios are what the gate judges (then at least "
                         f"{duet_verdict.MIN_PAIRS})")
    blocks: int = setting("DUET_BLOCKS", "8", integer(0, 40),
                          "blocks of throughput windows after the searches, the builds' slots in a balanced random "
                          f"order; their B/A is what the gate judges (0: none; else at least {duet_verdict.MIN_PAIRS})",
                          quick="6")
    windows: int = setting("DUET_WINDOWS", "4", integer(1, 20), "windows in each block")
    window_s: int = setting("DUET_WINDOW_S", "5", integer(1, 60),
                            "each window's length (s): both slots in a closed loop from one start instant", quick="3")
    connections: int = setting("DUET_CONNECTIONS", "8", integer(1, MAX_CONNECTIONS),
                               "each slot's connections in a window, each sending its next request when the last is "
                               "answered: enough to keep a node busy (more for requests that wait on others)")
    common_pct: int = setting("DUET_COMMON_PCT", "80", integer(0, 95),
                              "after each pair's searches, one step at this % of the lower capacity on both slots: "
                              "each build's p99 at the same rate, which the gate holds to the SLO, and with "
                              "MONITOR=on its CPU per request (0: none); with JFR=on, the rate both builds are "
                              "profiled at (0: the lower capacity)")

    def problems(self) -> list[str]:
        problems = [] if len(topology.NODES) >= len(SLOTS) else [
            f"NODES='{len(topology.NODES)}' cannot run a duet: its two slots are node1 and node2"]
        if 0 < self.blocks < duet_verdict.MIN_PAIRS:
            problems.append(f"DUET_BLOCKS='{self.blocks}': the blocks' interval needs at least "
                            f"{duet_verdict.MIN_PAIRS} (or 0: none, the pairs judged)")
        if self.blocks == 0 and self.pairs < duet_verdict.MIN_PAIRS:
            problems.append(f"DUET_PAIRS='{self.pairs}' with DUET_BLOCKS=0: the pairs are then judged, and their "
                            f"interval needs at least {duet_verdict.MIN_PAIRS}; raise DUET_PAIRS or give blocks")
        return problems + node_problems(build("A", self.a), build("B", self.b))


def builds(settings) -> tuple[Build, Build]:
    own = settings.kinds["duet"]
    return build("A", own.a), build("B", own.b)


class DuetShown(Showing):
    """How bench-duet shows what it found (capbench/engine/kind.py's Showing)."""
    section = ReportSection((duet_report.REPORT, duet_profile.REPORT), duet_report.report_values,
                            duet_report.report_figures, capacity_figures=False)

    def console(self, summary: dict, found: DuetFindings) -> None:
        duet_report.console(found)


class Duet(Kind):
    name = "duet"
    description = "build B against build A, measured together on twin slots (DUET_A= DUET_B= DUET_PAIRS= QUICK=1 ...)"
    targets = ("A", "B")
    own_settings = DuetSettings
    findings = DuetFindings
    shows = DuetShown()
    # make gate runs it itself (GATE_MODE=duet): its verdict comes from the blocks, or the pairs
    needs = Needs(gated=False)

    def planned_searches(self, settings) -> int:
        return 2 * self.own(settings).pairs

    def after_searches(self, settings) -> tuple[str, int, float]:
        """The blocks' windows: one step per slot each (a swap's warm-up is counted once the blocks begin)."""
        own = self.own(settings)
        windows = own.blocks * own.windows
        return analysis_blocks.WINDOW, windows * len(SLOTS), windows * (own.window_s + ONE_HOST_MARGIN_S)

    def run(self, bench, found: DuetFindings) -> None:
        a, b = (side.with_image() for side in builds(bench.settings))
        twins = Twins(bench.cluster_settings(), lambda nodes, env: bench.with_monitoring_paused(
            lambda: backend().recreate(nodes, {**bench.cluster_env, **env}, fresh=True)),
            backend().set_cpus if backend().live_cpus else None)
        bench.steps.progress.whole_lines = True
        pairs: list[duet_verdict.Pair] = []
        found.update({"builds": [a.as_dict(), b.as_dict()], "slots": list(SLOTS), "twin_cpus": twins.base["CPUS"]})
        own = self.own(bench.settings)
        last = own.pairs
        try:
            for number in range(1, last + 1):
                assignment = dict(zip(SLOTS, (a, b) if number % 2 else (b, a)))
                changed = twins.place(assignment, fresh=number == 1)
                if changed == RE_CREATED:
                    self.route(bench)
                loading = number == last and bench.profiling and not own.blocks
                if loading:  # a JVM whose recorder was just loaded runs slower for about half a minute
                    profile_step.load_recorders(SLOTS)
                if changed or loading:  # with quotas alone too: a JVM that ran on the smaller one compiled less
                    self.warm_up(bench, found, assignment)
                pairs.append(self.pair(bench, found, number, assignment))
                found.pairs = [p.as_dict() for p in pairs]
            if own.blocks:
                assignment = duet_blocks.run(self, bench, found, a, b, twins)
                if bench.profiling:
                    profile_step.load_recorders(SLOTS)
                    self.warm_up(bench, found, assignment)
            if bench.profiling:
                self.profile(bench, found, last, assignment, pairs[-1])
        finally:
            twins.restore()

    def profile(self, bench, found: DuetFindings, number: int, assignment: dict[str, Build],
                made: duet_verdict.Pair) -> None:
        """Both slots profiled as the last pair left them (capbench/duet/profile.py)."""
        # DUET_COMMON_PCT=0 (no common steps) profiles at the lower capacity itself.
        rate = duet_common.common_rate(self.own(bench.settings).common_pct or 100, made.a.capacity_rps,
                                       made.b.capacity_rps)
        if rate is None:
            say("the duet is not profiled: a build had no capacity in the last pair")
            return
        try:
            found.profile_difference = duet_profile.profile_both(bench, assignment, rate, lambda asks, seconds: together(
                bench, found, number, assignment, asks, duration_s=seconds))
        except ClusterError as problem:  # after the pairs: their verdict stands without it
            found.profile_problem = str(problem)
            say(f"the duet's profile failed: {problem}; the pairs stand")

    @staticmethod
    def route(bench) -> None:
        """Both slots in rotation, the other nodes out; each slot's own port answered by its node alone."""
        haproxy.set_rotation(SLOTS)
        for node in SLOTS:
            url = f"http://lb:{node_port(node)}{routing_path()}"
            # A slot just re-created can look UP and then fail its next checks while HAProxy learns its new
            # address, and a port's requests go to the other node while it is down (CI of ef4691c: port 8102's 4
            # to node1 right after node2 was re-created): asked again once it is UP, a wrong route stays wrong.
            for attempt in range(1, ROUTE_CHECK_ATTEMPTS + 1):
                haproxy.wait_until_up(SLOTS)
                seen = bench.loads.first.nodes_answering(url, ROUTE_CHECK_REQUESTS)
                if seen == {node: ROUTE_CHECK_REQUESTS}:
                    break
                if attempt == ROUTE_CHECK_ATTEMPTS:
                    raise ClusterError(f"HAProxy should send port {node_port(node)}'s requests to {node} only, but "
                                       f"these answered: {seen} ({ROUTE_CHECK_ATTEMPTS} times asked)")
                say(f"duet: port {node_port(node)}'s requests answered by {seen}, not {node} alone: asked again once "
                    f"{node} is UP")
                time.sleep(ROUTE_RECHECK_S)
        time.sleep(bench.steps.SETTLE_AFTER_PASS_S)

    def warm_up(self, bench, found: DuetFindings, assignment: dict[str, Build]) -> None:
        """Both slots together, in windows of WARMUP_S: each climbs from its build's expected rate by CLIMB per
        window until a window fails twice in a row (one failing window decided a build's guess in CI: p99 506 ms),
        then holds at HOLD of the last rate that passed until two windows in a row agree on its mean time per
        request (capbench/engine/warmup.py's rule), at most MAX_WINDOWS of holding. A JVM just
        started compiles for minutes, and only under load: warmed at a few requests a second, the younger slot
        lost a quarter of its capacity in the first pair (docs/findings.md, why the duet is built as it is). Where each slot's climb stopped is its build's
        first guess. Once both builds have capacities, a warm-up only holds (after builds swapped by their CPU
        quotas: the JVM that ran on the smaller quota had compiled less, and served a fraction of the other
        slot's rate)."""
        from capbench.engine.warmup import MAX_WINDOWS, agree, expected_rps, steady_figure
        s = bench.settings
        if s.warmup_s <= 0:
            return
        rates = {node: bench.capacity(b.name) or expected_rps(b.settings(s), "node1") or s.start_rate
                 for node, b in assignment.items()}
        climbing = {node: not bench.capacity(b.name) for node, b in assignment.items()}
        failed_once = {node: False for node in assignment}
        duration = max(s.warmup_s, bench.driver.min_step_s)
        figures: dict[str, list] = {node: [] for node in assignment}
        for _ in range(MAX_CLIMB + CLIMB_RECHECKS + MAX_WINDOWS):
            asks = [Ask(node, round(rate if climbing[node] else rate * HOLD, 1), "warmup") for node, rate in rates.items()]
            records = together(bench, found, 0, assignment, asks, duration_s=duration)
            for node, record in records.items():
                if climbing[node] and record.passed:
                    rates[node] *= CLIMB
                    failed_once[node] = False
                elif climbing[node] and not failed_once[node]:  # by a hair, perhaps: one window must not decide
                    failed_once[node] = True                     # the build's guess (the same rate again)
                elif climbing[node]:  # from now on it holds below the last rate that passed
                    climbing[node] = False
                    rates[node] /= CLIMB
                    found.guess[assignment[node].name] = rates[node]
                else:
                    figures[node].append(steady_figure(record))
            if not any(climbing.values()) and (all(len(f) >= 2 and agree(f[-2], f[-1]) for f in figures.values())
                                               or all(len(f) >= MAX_WINDOWS for f in figures.values())):
                break
        steady = all(len(f) >= 2 and agree(f[-2], f[-1]) for f in figures.values())
        bench.steps.warmups.append({"label": "duet", "target": " and ".join(assignment), "rate_rps": rates,
                                    "window_s": duration, "service_ms": figures, "steady": steady})
        if not steady:
            say(f"warning: the slots were not both steady after their warm-up (mean ms per request {figures}); "
                "the pair starts anyway")

    @staticmethod
    def starts(bench, found: DuetFindings, builds_) -> tuple[list[float], float]:
        """Where each build's search starts and how fast both grow (grid_starts, below), from their capacities
        in the pairs so far, or where their warm-up's climbs stopped."""
        s = bench.settings
        return grid_starts([bench.capacity(b.name) or found.guess.get(b.name) for b in builds_],
                           s.start_rate, s.growth)

    def pair(self, bench, found: DuetFindings, number: int, assignment: dict[str, Build]) -> duet_verdict.Pair:
        s = bench.settings
        starts, growth = self.starts(bench, found, assignment.values())
        plans = {node: SearchPlan(start, growth, s.precision_pct, s.max_steps) for node, start in zip(assignment, starts)}
        set_aside: dict[str, list[float]] = {node: [] for node in assignment}

        def reopened(node: str, outcome) -> None:
            set_aside[node].append(outcome.capacity)
            say(f"pair {number}: {assignment[node].name} on {node}: {outcome.capacity:g}/s failed twice beside the "
                "other search's steps: searched again below it")

        both: list[same_instant.Together] = []

        def measure(asks: list[Ask]) -> dict:
            records = together(bench, found, number, assignment, asks)
            judged = both_judged(assignment, asks, records)
            if judged:
                both.append(judged)
            return records

        outcomes = search_together(plans, measure, reopened)
        results = {}
        for node, build_ in assignment.items():
            outcome = outcomes[node]
            bench.searcher.searches.setdefault(build_.name, []).append(
                {"repeat": number, "slot": node, "start_rps": plans[node].start_rate,
                 "set_aside_rps": set_aside[node], **outcome.as_dict()})
            bench.steps.progress.search_done()
            say(f"pair {number}: {build_.name} on {node}: capacity "
                f"{f'{outcome.capacity:g}/s' if outcome.capacity else 'none'} ({outcome.status}: {outcome.reason})")
            results[build_.name] = duet_verdict.SlotResult(node, outcome.capacity, outcome.lowest_failure)
        made = duet_verdict.Pair(number, results["A"], results["B"], same_instant.same_instant_range(both))
        say(f"pair {number}: {said(made)}")
        rate = duet_common.common_rate(self.own(s).common_pct, made.a.capacity_rps, made.b.capacity_rps)
        if rate:  # the SLO at a common rate guards the gate; CPU per request needs MONITOR=on
            together(bench, found, number, assignment, [Ask(node, rate, duet_common.COMMON) for node in assignment])
        return made

    def summarize(self, bench, summary: dict, found: DuetFindings) -> None:
        if not found.builds:  # it broke off before the builds were made
            return
        try:
            interval = duet_verdict.crossover_interval([duet_verdict.Pair.from_dict(p) for p in found.pairs])
        except ValueError:  # too few pairs: the table says what there is
            interval = None
        try:
            blocks = duet_verdict.interval_dict(analysis_blocks.interval(
                [analysis_blocks.Block.from_dict(k) for k in found.blocks]))
        except ValueError:  # too few blocks: the table says what there is
            blocks = None
        found.interval = interval and duet_verdict.interval_dict(interval)
        found.blocks_interval = blocks
        found.common = duet_common.summary(read_steps(bench.paths.steps), self.own(bench.settings).common_pct)


def grid_starts(found: list[float | None], start_rate: float, growth: float) -> tuple[list[float], float]:
    """Each build's start and the growth both searches take: every start a point of one grid (START_RATE times
    a power of the near-guess growth), the one nearest to where the harness starts near a guess (capbench/engine/searcher.py)
    below the build's own capacity found so far (a build without one: the lower capacity found); with none found,
    START_RATE and GROWTH. Each from its own capacity but not on one grid, the two searches walked one path scaled
    by those capacities' ratio, ended in the same step of it and handed one pair's ratio on to the next
    (docs/findings.md, why the duet is built as it is); on one grid each pair's ratio is its own. Both from the lower capacity, a build far faster than the other climbed and the
    other came down from START_RATE in every pair (a build at a fifth of the other's capacity: a dozen steps a
    pair, its first three at twice its capacity), which a start near its own capacity spares."""
    from capbench.engine.searcher import NEAR_GUESS_GROWTH, NEAR_GUESS_START  # the harness's, not make help's, imports
    from capbench.search.capacity import MIN_RATE
    known = [rate for rate in found if rate]
    if not known:
        return [start_rate] * len(found), growth
    step = min(growth, NEAR_GUESS_GROWTH)

    def on_grid(capacity: float) -> float:
        power = round(math.log(capacity * NEAR_GUESS_START / start_rate, step))
        return max(MIN_RATE, round(start_rate * step ** power, 1))

    return [on_grid(rate or min(known)) for rate in found], step


def both_judged(assignment: dict[str, Build], asks: list[Ask], records: dict) -> same_instant.Together | None:
    """A step set both builds' slots were judged in (valid, windows agreeing), as A's and B's rates and verdicts;
    None when one slot was idle or could not be judged."""
    judged = {assignment[ask.slot].name: (ask.rate, records[ask.slot]) for ask in asks
              if records[ask.slot].valid and not records[ask.slot].unsteady}
    if len(judged) != 2:
        return None
    (a_rps, a), (b_rps, b) = judged["A"], judged["B"]
    return same_instant.Together(a_rps, a.passed, b_rps, b.passed)


def said(pair: duet_verdict.Pair) -> str:
    if pair.ratio is None:
        return "no ratio"
    known = pair.instants
    if known is None:
        return f"B/A = {pair.ratio:.3f} (no step bounded it at the same instants)"
    return (f"B/A = {pair.ratio:.3f} (brackets {pair.bracket_ratio:.3f}; {known.bounds} same-instant steps put it in "
            f"({shown(known.low)}, {shown(known.high)}), {known.contradicted} contradicted)")


def together(bench, found: DuetFindings, number: int, assignment: dict[str, Build], asks: list[Ask],
             duration_s: int | None = None) -> dict:
    """The asked steps measured at once, each slot's requests to its own port asking for its build, from one
    start instant; each slot judged on its own requests, recorded with the slots' quotas (twins of node1, each
    with its build's). A failed search step whose node HAProxy then holds down ends the duet (its steps no
    longer measure the build)."""
    from capbench.engine.searcher import down_after_failed_step
    from capbench.load.load_hosts import START_MARGIN_S
    # One load host starts both generators itself: a second is ample for two execs to reach it.
    start_at = time.time() + (START_MARGIN_S if len(bench.loads.hosts) > 1 else ONE_HOST_MARGIN_S)
    routes = {ask.slot: bench.steps.route_for(node_port(ask.slot), assignment[ask.slot].settings(bench.settings))
              for ask in asks}

    quotas = {slot: float(build_.node.get("CPUS") or found.twin_cpus) for slot, build_ in assignment.items()}

    def one(ask: Ask):
        return bench.steps.measure(ask.slot, number, ask.rate, ask.phase, label=assignment[ask.slot].name,
                                   route=routes[ask.slot], start_at=start_at, duration_s=duration_s,
                                   node_cpus=quotas)

    with ThreadPoolExecutor(len(asks)) as pool:
        records = dict(zip((ask.slot for ask in asks), pool.map(one, asks)))
    for ask in asks:
        if ask.phase not in ("warmup", "companion") and not records[ask.slot].passed:
            down = down_after_failed_step((ask.slot,), records[ask.slot].step)
            if down is not None:
                bench.searcher.losses.seen(down.nodes, down.how)
                raise ClusterError(str(down))
    return records


KIND = Duet()
