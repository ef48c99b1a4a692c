"""Capacity searches of a target through the balancer: its nodes put in rotation (and only they, checked by who
answers), a warm-up, then REPEATS searches (capbench/search/capacity.py's find_capacity) of constant-rate steps, each
recorded under a label. A target whose node is down is skipped and said; a node that goes down during a
search ends it. Part of the Bench (capbench/engine/runner.py)."""
from __future__ import annotations

import time

from capbench.engine import node_state
from capbench.engine.losses import Losses
from capbench.engine.measuring import StepRunner
from capbench.engine.progress import Progress, say
from capbench.engine.warmup import MAX_WINDOWS, expected_rps, run_warm_rate, warm_up
from capbench.hosts import haproxy, topology
from capbench.hosts.backend import ClusterError
from capbench.hosts.balancer_address import base_url
from capbench.hosts.cluster_settings import grinder_path, has_grinder, routing_path
from capbench.hosts.topology import DATABASE
from capbench.load.loadhost import LoadHost
from capbench.load.scenario import target_url, user_ids
from capbench.rundata.events import MACHINE_LOST, touching
from capbench.rundata.records import StepRecord
from capbench.rundata.summary import capacity_of
from capbench.search.capacity import find_capacity

# A target's nodes that are down when its search should start (a node killed by hand during a run): the
# search waits this long for them, then is skipped and says so; the run goes on.
DOWN_WAIT_S = 30
# A search with a guess of its capacity (a previous repeat, the nodes' sum, the history) starts at this share of it
# and grows by at most this factor.
NEAR_GUESS_START = 0.8
NEAR_GUESS_GROWTH = 1.25
ROUTING_CHECK_MORE = 48  # requests sent again when a node in rotation has not answered the first few
# A failed step with at least this share of its requests failed asks whether a machine was lost.
MOSTLY_FAILED_PCT = 50


def near_guess(guess: float | None, start_rate: float, growth: float) -> tuple[float, float]:
    """Where a search starts and how fast it grows. Near a guess it starts just below it and grows gently: a
    first failure far above the capacity leaves a node slower for the rest of its search, failing rates below
    its capacity. Without one: START_RATE and GROWTH."""
    if not guess:
        return start_rate, growth
    return max(start_rate, round(guess * NEAR_GUESS_START, 1)), min(growth, NEAR_GUESS_GROWTH)


class NodeDown(RuntimeError):
    """A node of the target being searched went down: the search's steps no longer measure the target."""

    def __init__(self, nodes: list[str], how: str):
        super().__init__(f"{', '.join(nodes)} went down ({how})")
        self.nodes, self.how = nodes, how


def down_after_failed_step(nodes: tuple[str, ...], step: int) -> NodeDown | None:
    """What went down, when HAProxy still holds any of `nodes` DOWN DOWN_WAIT_S after failed step `step`; else
    None. The DOWN may have come during the step or in the wait after it (a kill just after it ended)."""
    down = haproxy.still_down(nodes, DOWN_WAIT_S)
    if not down:
        return None
    return NodeDown(down, f"HAProxy's health checks: still DOWN {DOWN_WAIT_S} s after step {step} failed")


class Searcher:
    """Searches with the run's steps (`steps`), checks the routing from the load host `host`, and counts each
    search done in `progress`; keeps each label's searches and the labels it skipped."""

    def __init__(self, steps: StepRunner, host: LoadHost, progress: Progress):
        self.steps = steps
        self.host = host
        self.progress = progress
        self.searches: dict[str, list[dict]] = {}  # per label, each repeat's search
        self.skipped: dict[str, str] = {}  # per label, why its search did not run (its nodes were down)
        self.losses = Losses()  # the machines and nodes lost, as events
        # STATE_BETWEEN=restart: re-creates nodes with the run's settings, monitoring paused (set by the Bench)
        self.recreate_nodes = None
        # Nodes whose JVM started afresh since their last warm-up: a cold JIT fails the first steps at rates it
        # carries once compiled (bench-sessions' node1 on the examples: 562.5/s after one warm-up window, its first
        # step failed at 264/s achieved and bounded the search; 1087.5/s warmed until steady).
        self.started_afresh: set[str] = set()

    def recreate(self, nodes: tuple[str, ...]) -> None:
        self.recreate_nodes(nodes)
        self.started_afresh.update(nodes)

    def route(self, target: str) -> None:
        """Puts exactly the target's nodes in rotation and checks that they, and only they, answer."""
        nodes_in = topology.IN_ROTATION[target]
        haproxy.set_rotation(nodes_in)
        haproxy.wait_until_up(nodes_in)
        # One user through first (warm-up), which also shows where HAProxy sends the traffic; beside a user's
        # application, a path every node answers (the Grinder's /info, or a JAR's APP_HEALTH).
        settings = self.steps.settings
        url = (f"{base_url('lb')}{routing_path()}" if grinder_path() or not has_grinder()
               else f"{target_url('lb', settings)}&user={user_ids(1)[0]}")
        seen = self.host.nodes_answering(url, max(settings.session_requests, 4 * len(nodes_in)))
        for again in range(2):
            if not set(seen) < set(nodes_in):
                break
            # A node just put back may only be behind in the round robin's order: ask more before calling it
            # missing. The weighted round robin can also keep a node at none right after the balancer and the
            # nodes were re-created, which setting the rotation again fixes: the second time it is set again first.
            if again:
                haproxy.set_rotation(nodes_in)
                haproxy.wait_until_up(nodes_in)
            more = self.host.nodes_answering(url, ROUTING_CHECK_MORE)
            seen = {node: seen.get(node, 0) + more.get(node, 0) for node in {*seen, *more}}
        if set(seen) != set(nodes_in):
            raise ClusterError(f"HAProxy should send {target}'s traffic to {', '.join(nodes_in)} "
                               f"but these answered: {seen}")

    def warm_every_node(self) -> None:
        """The run's first warm-up, before its first search: every node together (capbench/engine/warmup.py); once."""
        if self.steps.warmups or self.steps.settings.warmup_s <= 0:
            return
        self.route("cluster")
        time.sleep(self.steps.SETTLE_AFTER_PASS_S)
        warm_up(self.steps, "cluster", run_warm_rate(self.steps.settings), "warm-up")

    def capacity(self, label: str) -> float | None:
        return capacity_of(self.searches.get(label, []))

    def nodes_down(self, target: str) -> list[str]:
        """The target's nodes HAProxy's checks do not hold up after DOWN_WAIT_S (put in rotation first)."""
        haproxy.set_rotation(topology.IN_ROTATION[target])
        return haproxy.still_down(topology.IN_ROTATION[target], DOWN_WAIT_S)

    def search(self, target: str, label: str | None = None, repeats: int | None = None,
               estimate: float | None = None) -> None:
        """REPEATS capacity searches of the target (or `repeats`), recorded under `label` (default: the target),
        starting near `estimate` (default: for the cluster, the sum of its nodes' capacities; else the label's
        capacity in the last complete run of the workload in the history). Skipped, and
        said, when a node of the target is down (the run goes on: what it measured stays true)."""
        s = self.steps.settings
        label = label or target
        down = self.nodes_down(target)
        if down:
            how = f"HAProxy's health checks: DOWN for {DOWN_WAIT_S} s before {label}'s search"
            self.losses.seen(down, how)
            self.skipped[label] = f"{', '.join(down)} down (HAProxy's health checks) for {DOWN_WAIT_S} s"
            say(f"warning: skipping {label}'s search: {self.skipped[label]}")
            self.progress.search_done()
            return
        # The run's first warm-up of every node keeps the order of the nodes' searches from deciding which looks
        # faster; a target started afresh (restart, bench-sessions) is warmed alone until steady instead.
        afresh = s.state_between == "restart" or set(topology.IN_ROTATION.get(target, ())) <= self.started_afresh
        if target != "lb" and not afresh:
            self.warm_every_node()
        if target != "lb":
            node_state.before_warmup(s.state_between, label, topology.IN_ROTATION[target], self.recreate)
        self.route(target)
        # The routing check's requests end well before the warm-up starts: the request counts of each step
        # (metrics/) run from a sample before it to one after it, and must hold only its traffic.
        time.sleep(self.steps.SETTLE_AFTER_PASS_S)
        estimate = estimate or self._estimate(target) or expected_rps(s, label)
        # The warm-up runs at half the rate the search starts at (a quarter of an estimate), until the target is
        # steady (capbench/engine/warmup.py): a cold node on a small CPU quota fails even a fraction of its capacity after
        # a short warm-up at a few requests a second.
        warm_rate = max(s.start_rate, estimate / s.growth) if estimate else s.start_rate
        # QUICK warms for one window, except a JVM started afresh: it warms until steady.
        cold = self.started_afresh & set(topology.IN_ROTATION[target])
        if s.warmup_s > 0:
            warm_up(self.steps, target, round(warm_rate / 2, 1), label,
                    max_windows=1 if s.quick and not cold else MAX_WINDOWS)
        self.started_afresh -= cold
        done = self.searches.setdefault(label, [])
        for repeat in range(len(done) + 1, len(done) + 1 + (repeats or s.repeats)):
            previous = [x["capacity_rps"] for x in done if x["capacity_rps"]]
            guess = previous[-1] if previous else estimate
            start, growth = near_guess(guess, s.start_rate, s.growth)
            state = node_state.before_search(s.state_between, label, topology.IN_ROTATION[target]) if target != "lb" else None
            try:
                outcome = find_capacity(lambda rate, phase: self.search_step(target, label, repeat, rate, phase),
                                        start, growth, s.precision_pct, s.max_steps, s.hold_windows, s.step_s)
            except NodeDown as down:  # the search's steps no longer measure the target: end it, go on
                self.losses.seen(down.nodes, down.how)
                done.append({"repeat": repeat, "start_rps": start, "status": "node-down", "capacity_rps": None,
                             "reason": str(down), "state_before": state})
                self.progress.search_done()
                say(f"warning: {label}'s search ended: {down}")
                return
            after = node_state.after_search(topology.IN_ROTATION[target]) if target != "lb" else None
            done.append({"repeat": repeat, "start_rps": start, **outcome.as_dict(), "state_before": state,
                         "state_after": after})
            self.progress.search_done()
            capacity = f"{outcome.capacity:g}/s" if outcome.capacity else "none"
            say(f"{label} capacity {capacity} ({outcome.status}: {outcome.reason})")
            for warning in outcome.warnings:
                say(f"warning: {label}: {warning}")

    def search_step(self, target: str, label: str, repeat: int, rate: float, phase: str) -> StepRecord:
        """A search's step; a failed one whose target lost a node ends the search: a node HAProxy still holds
        DOWN DOWN_WAIT_S after the step. An overloaded node fails its health checks too (its /health waits
        behind the grinding threads), and passes them again within seconds once the step's load is gone."""
        record = self.steps.measure(target, repeat, rate, phase, label=label)
        if not record.passed:
            lost = self.machine_lost_under(target, record)
            if lost is not None:
                raise lost
            down = down_after_failed_step(topology.IN_ROTATION[target], record.step)
            if down is not None:
                raise down
        return record

    def machine_lost_under(self, target: str, record: StepRecord) -> NodeDown | None:
        """Where most of a failed step's requests failed: whether a machine the target's requests need (its
        nodes', and the database's for WORKLOAD=query) is lost, which ends the search as a node down does. A lost
        database answers every request with an error but takes no node out of HAProxy's rotation: a search
        would otherwise step down for minutes, measuring nothing."""
        if record.result.failure_pct < MOSTLY_FAILED_PCT:
            return None
        needed = (*topology.IN_ROTATION[target], *([DATABASE] if self.steps.settings.workload == "query" else []))
        self.losses.sweep(f"step {record.step} failed {record.result.failure_pct:.0f} % of its requests")
        found = [e for e in touching(self.losses.events, needed) if e["what"] == MACHINE_LOST]
        if not found:
            return None
        return NodeDown([h for e in found for h in e["roles"] if h in needed],
                        f"its machine was lost: step {record.step} failed")

    def _estimate(self, target: str) -> float | None:
        """A first guess to start from: the cluster starts near the sum of its nodes' capacities."""
        if target != "cluster":
            return None
        caps = [self.capacity(node) for node in topology.NODES]
        return sum(caps) if all(caps) else None
