"""make bench-single / bench-cluster / bench-selfcheck / bench-overhead: capacity searches from the load host,
through HAProxy, with every host logged by PCP (MONITOR=on, the default).

single:    node1 alone (node2 and node3 in maintenance through HAProxy's runtime API).
cluster:   node1, node2, node3 each alone, then all three: each capacity, their sum, the cluster's capacity,
           the scale-out efficiency E = X_cluster / sum(X_i) and X_cluster / X_node1.
selfcheck: one step on a trivial endpoint (HAProxy's own /lb-health) at SELFCHECK_RATE: shows whether the
           generator keeps the offered rate (within 1 %) and what it costs the load host.
overhead:  node1's capacity without monitoring and with it, alternating (off, on, then on, off, ... REPEATS
           pairs), and the ratio with/without: what PCP costs the measurement.
usl:       node1's throughput and mean latency at each closed-loop concurrency of USL_LEVELS (no think time),
           and the Universal Scalability Law fitted to them (report/usl.py): σ, κ, λ, N*, R².
variants:  the study's investigation: for each of VARIANTS, node1's capacity and the cluster's, then one more
           step at each capacity during which thread dumps of every node in rotation are sampled (lock evidence,
           load/threaddump.py) beside the PCP figures (allocation rate, % time in GC, CPU of quota).

bench-cluster with WEIGHTS=auto measures the cluster three times after the nodes: equal weights, weights in
proportion to the node capacities just measured, and leastconn (equal weights), each with its E.

Every run writes results/<run-id>/ (results.py) as it goes; interrupted or failed runs keep their steps and
are marked partial. Exit status: 0 done, 1 failed, 2 bad settings or cluster not up, 130 interrupted.
"""
from __future__ import annotations

import argparse
import json
import math
import os
import platform
import re
import signal
import statistics
import subprocess
import sys
import threading
import time
from dataclasses import replace
from pathlib import Path

from load import ROOT, loadhost
from load.drivers import DriverError, StepPlan, find_wrk2
from load.drivers.oha import OhaDriver
from load.drivers.wrk2 import LOADHOST_BINARY, Wrk2Driver
from load.results import RunPaths, append_jsonl, git_sha, new_run, read_jsonl, results_dir, write_json, write_jsonl
from load.scenario import connections_for, target_url, user_ids
from load.search import find_capacity
from load.settings import MAX_CONNECTIONS, BenchSettings, SettingsError, check_for_driver, load_settings, read_env_file
from load.step import StepRecord, judge
from load import failover, lblog, runlock, stress, threaddump
from metrics import export
from metrics.monitor import Monitor
from report import build as report_build
from report import history, usl

PROFILES = ROOT / "cluster" / "profiles"
TUNABLES = ROOT / "tomcat-conf" / "tunables.env"
TARGETS = {"single": ("node1",), "cluster": ("node1", "node2", "node3", "cluster"), "selfcheck": ("lb",),
           "overhead": ("node1",), "usl": ("node1",), "variants": ("node1", "cluster"), "failover": ("cluster",),
           "stress": ("cluster",)}
IN_ROTATION = {"node1": ("node1",), "node2": ("node2",), "node3": ("node3",), "cluster": loadhost.NODES,
               # bench-failover: the nodes that carry the load while one is down
               **{f"without {n}": tuple(m for m in loadhost.NODES if m != n) for n in loadhost.NODES}}
# A target's nodes that are down when its search should start (a node killed by hand during a run): the
# search waits this long for them, then is skipped and says so; the run goes on.
DOWN_WAIT_S = 30
SELFCHECK_URL = "http://lb:8080/lb-health"
SELFCHECK_DEFAULT_RATE = 4000.0
SELFCHECK_TOLERANCE_PCT = 1.0
# Pause after a step before the next; after a failed one, also wait until the requests an overloaded step
# left queued in HAProxy or running on the nodes are done (up to DRAIN_MAX_S), so the next step starts clean.
SETTLE_AFTER_PASS_S = 1
SETTLE_AFTER_FAIL_S = 5
DRAIN_MAX_S = 120
STEPS_PER_SEARCH_GUESS = 10  # for the ETA until a search has finished
ROUTING_CHECK_MORE = 48  # requests sent again when a node in rotation has not answered the first few
DUMPS_PER_STEP = 4  # thread dumps of each node in rotation during a bench-variants evidence step
# WEIGHTS=auto: the balancing choices the cluster is measured under (label, HAProxy balance, weights)
BALANCING = (("equal", "roundrobin", "equal"), ("weighted", "roundrobin", "capacity"), ("leastconn", "leastconn", "equal"))
AUTO_WEIGHT_MAX = 100  # the fastest node's weight under WEIGHTS=auto (HAProxy allows 1..256)


def searches_planned(kind: str, settings: BenchSettings) -> int:
    """How many capacity searches a run makes (for the ETA)."""
    if kind == "selfcheck":
        return 1
    if kind == "variants":
        return 2 * len(settings.variants) * settings.repeats
    if kind == "failover":
        return 0 if settings.failover_rate else 1
    if kind == "stress":
        return 0 if settings.stress_capacity else 1
    if kind == "cluster" and settings.weights == "auto":
        return (len(loadhost.NODES) + len(BALANCING)) * settings.repeats
    return len(TARGETS[kind]) * settings.repeats * (2 if kind == "overhead" else 1)


def capacity_weights(capacities: dict[str, float]) -> dict[str, int]:
    """HAProxy weights in proportion to the nodes' capacities, the fastest at AUTO_WEIGHT_MAX."""
    top = max(capacities.values())
    return {node: max(1, round(AUTO_WEIGHT_MAX * cap / top)) for node, cap in capacities.items()}


def say(message: str) -> None:
    print(f"capbench: {message}", flush=True)


def choose_driver(settings: BenchSettings, environ: dict[str, str], closed_loop: bool = False):
    """The driver LOADGEN asks for, and the user's wrk2 binary when that is the one; SettingsError if absent.
    A closed loop (bench-usl) needs oha: wrk2 always paces its requests at a rate."""
    if closed_loop:
        if settings.loadgen == "wrk2":
            raise SettingsError("LOADGEN='wrk2' cannot run make bench-usl: its steps are closed loops (each "
                                "connection sends when answered) and wrk2 always paces at a rate; use LOADGEN=oha "
                                "or auto")
        return OhaDriver(), None
    wrk2 = find_wrk2(environ.get("WRK2"))
    if environ.get("WRK2") and not (wrk2.is_file() and os.access(wrk2, os.X_OK)):
        raise SettingsError(f"WRK2='{environ['WRK2']}' is not an executable file: give the path of a wrk2 "
                            "binary (DEVELOPERS.md says how to build one), or unset it to use oha")
    if settings.loadgen == "wrk2" and wrk2 is None:
        raise SettingsError("LOADGEN='wrk2' but no wrk2 binary: set WRK2=/path/to/wrk2 or put wrk2 on PATH "
                            "(DEVELOPERS.md), or use LOADGEN=oha or auto")
    if settings.loadgen == "wrk2" or (settings.loadgen == "auto" and wrk2 is not None):
        return Wrk2Driver(), wrk2
    return OhaDriver(), None


def profile_name() -> str:
    return os.environ.get("PROFILE") or "small"


def cluster_settings() -> dict[str, str]:
    """The cluster's settings this run used: the profile and the Tomcat tunables, with the environment's
    overrides (as cluster/compose.sh applies them)."""
    values = {**read_env_file(PROFILES / f"{profile_name()}.env"), **read_env_file(TUNABLES)}
    return {key: os.environ.get(key, value) for key, value in values.items()}


def check_profile() -> None:
    if not re.fullmatch(r"[a-z0-9_-]+", profile_name()) or not (PROFILES / f"{profile_name()}.env").is_file():
        allowed = ", ".join(sorted(p.stem for p in PROFILES.glob("*.env")))
        raise SettingsError(f"PROFILE='{profile_name()}' is not a profile: use one of {allowed} "
                            "(files in cluster/profiles/)")


def selfcheck_rate(settings: BenchSettings) -> float:
    """SELFCHECK_RATE, or twice the highest cluster capacity any complete run recorded."""
    if settings.selfcheck_rate is not None:
        return settings.selfcheck_rate
    best = 0.0
    for summary in results_dir().glob("*/summary.json"):
        try:
            data = json.loads(summary.read_text())
        except (OSError, ValueError):
            continue
        if data.get("kind") == "cluster" and data.get("status") == "complete":
            best = max(best, data.get("cluster_rps") or 0.0)
    return 2 * best if best else SELFCHECK_DEFAULT_RATE


class Progress:
    """One line per step: target, phase, offered, achieved, p99, failures, verdict, elapsed and ETA."""

    def __init__(self, searches: int, step_s: int, steps_per_search: int = STEPS_PER_SEARCH_GUESS):
        self.started = time.monotonic()
        self.steps_per_search = steps_per_search
        self.searches_left = searches
        self.steps_in_search = 0
        self.finished_search_steps: list[int] = []
        self.step_walls: list[float] = []
        self.step_s = step_s

    def begin(self, target: str, phase: str, number: int, rate: float, duration: int, connections: int) -> float:
        pace = f"{rate:>8.1f}/s" if rate > 0 else f"{'closed':>10}"
        print(f"  {target:<7} {phase:<7} #{number:<3} {pace} {duration:>3}s {connections:>4}c ", end="", flush=True)
        return time.monotonic()

    def end(self, record: StepRecord, began: float) -> None:
        self.step_walls.append(time.monotonic() - began)
        if record.phase != "warmup":
            self.steps_in_search += 1
        r = record.result
        p99 = r.latency_ms.get("p99")
        verdict = "INVALID" if not record.valid else ("pass" if record.passed else "FAIL")
        why = f"  ({record.invalid_reason or '; '.join(record.slo_broken)})" if not record.passed else ""
        p99_text = f"{p99:9.1f}ms" if p99 is not None else "        -  "
        print(f"→ {r.achieved_rps:8.1f}/s  p99 {p99_text}  fail {r.failure_pct:6.2f}%  {verdict:<7} "
              f"{self._clock()}{why}", flush=True)

    def search_done(self) -> None:
        self.finished_search_steps.append(self.steps_in_search)
        self.steps_in_search = 0
        self.searches_left -= 1

    def _clock(self) -> str:
        elapsed = time.monotonic() - self.started
        per_search = (statistics.mean(self.finished_search_steps) if self.finished_search_steps
                      else self.steps_per_search)
        steps_left = max(0.0, per_search - self.steps_in_search) + per_search * max(0, self.searches_left - 1)
        per_step = statistics.mean(self.step_walls) + SETTLE_AFTER_PASS_S if self.step_walls else self.step_s
        return f"elapsed {_mmss(elapsed)}  ETA ~{_mmss(steps_left * per_step)}"


def _mmss(seconds: float) -> str:
    return f"{int(seconds // 60)}m{int(seconds % 60):02d}s"


class NodeDown(RuntimeError):
    """A node of the target being searched went down: the search's steps no longer measure the target."""


class Bench:
    def __init__(self, kind: str, settings: BenchSettings, driver, wrk2_local: Path | None, run_id: str,
                 paths: RunPaths):
        self.kind = kind
        self.settings = settings
        self.driver = driver
        self.wrk2_local = wrk2_local
        self.run_id = run_id
        self.paths = paths
        self.host = loadhost.LoadHost()
        self.step_number = 0
        self.work_dir = f"{loadhost.WORK_DIR}/{run_id}"
        self.version = "unknown"
        self.users_file: str | None = None
        self.urls_file: str | None = None
        self.searches: dict[str, list[dict]] = {}
        self.label: str | None = None  # what the steps being measured belong to, e.g. "node1 v2", "cluster equal"
        self.evidence: dict[str, dict] = {}  # bench-variants: per label, the evidence step and its thread dumps
        self.balancing: dict[str, dict] = {}  # WEIGHTS=auto: per choice, the balance and weights measured under
        self.progress = Progress(searches_planned(kind, settings), settings.step_s,
                                 len(settings.usl_levels) if kind == "usl" else STEPS_PER_SEARCH_GUESS)
        self.usl_points: list[dict] = []  # make bench-usl: one per concurrency level
        self.failover: dict | None = None  # make bench-failover: load/failover.py's analysis
        self.stress: dict | None = None  # make bench-stress: load/stress.py's analysis
        self.skipped: dict[str, str] = {}  # per label, why its search did not run (its nodes were down)
        self.lb_events: list[dict] = []  # HAProxy's DOWN/UP state changes of the nodes during the run
        self.started = time.time()
        # bench-overhead switches monitoring itself; the other benches log the whole run when MONITOR=on.
        self.monitor = Monitor(run_id, paths.root / "pcp") if settings.monitor or kind == "overhead" else None

    # -- preparation --------------------------------------------------------------------------------------
    def prepare(self) -> None:
        """Copies the user's wrk2 and the scenario's dataset to the load host; records the driver version."""
        if self.wrk2_local is not None:
            self.host.put_binary(self.wrk2_local, LOADHOST_BINARY)
        self.version = " ".join(self.host.exec(self.driver.version_argv()).decode().split())
        if self.settings.scenario == "session" and self.kind != "selfcheck":
            users = user_ids(self.settings.users)
            users_text = ("\n".join(users) + "\n").encode()
            self.paths.users.write_bytes(users_text)
            self.users_file = f"{self.work_dir}/users.txt"
            self.urls_file = f"{self.work_dir}/urls.txt"
            base = target_url("lb", self.settings)
            self.host.put(self.users_file, users_text)
            self.host.put(self.urls_file, "".join(f"{base}&user={u}\n" for u in users).encode())

    def run_json(self) -> dict:
        return {"run_id": self.run_id, "kind": self.kind, "settings": self.settings.as_dict(),
                "driver": {"name": self.driver.name, "version": self.version,
                           "binary": str(self.wrk2_local) if self.wrk2_local else None},
                "profile": profile_name(), "cluster_settings": cluster_settings(),
                "backend": loadhost.backend(), "backend_version": loadhost.backend_version(),
                "targets": list(TARGETS[self.kind]),
                "harness": {"python": platform.python_version(), "host": platform.node()},
                "git_sha": git_sha(), "nodes": {node: loadhost.node_info(node) for node in loadhost.NODES},
                "started_epoch": time.time()}

    # -- steps ----------------------------------------------------------------------------------------------
    def measure(self, target: str, repeat: int, rate: float, phase: str, url: str | None = None,
                duration_s: int | None = None, closed_connections: int | None = None,
                settle: bool = True, stuck_s: float = 0) -> StepRecord:
        """One step at `rate`, or with closed_connections: a closed loop of that many (rate 0). settle=False:
        the next step follows at once, on what this one left queued (bench-stress's overload and recovery).
        stuck_s: the generator gets rate × stuck_s connections more, for requests a fault will hold that long
        (a frozen node's): its users are independent, so theirs must not wait for a free connection."""
        s = self.settings
        self.step_number += 1
        connections = closed_connections or min(MAX_CONNECTIONS, connections_for(rate, s) + math.ceil(rate * stuck_s))
        single = url is not None or s.scenario == "single"
        plan = StepPlan(url=url or target_url("lb", s), rate=rate, duration_s=duration_s or s.step_s,
                        connections=connections, threads=s.threads, timeout_s=s.timeout_s,
                        users_file=None if single else self.users_file,
                        urls_file=None if single else self.urls_file, session_requests=s.session_requests)
        began = self.progress.begin(target, phase, self.step_number, rate, plan.duration_s, connections)
        step_dir = f"{self.work_dir}/step-{self.step_number:03d}"
        try:
            files, envelope = self.host.run_step(step_dir, self.driver.argv(plan),
                                                 timeout=plan.duration_s + s.timeout_s + 120)
        except KeyboardInterrupt:
            self.host.stop_step(step_dir)
            raise
        self._keep_raw(files)
        result = self.driver.parse(files, plan, envelope, self.version)
        record = judge(self.run_id, self.step_number, phase, target, repeat, plan.url, "single" if single
                       else s.scenario, result, s.slo)
        if closed_connections:  # no offered rate, so no SLO verdict: the step only has to be valid
            record.passed, record.slo_broken = record.valid, []
        append_jsonl(self.paths.steps, {**record.to_json(), "label": self.label or target})
        self.progress.end(record, began)
        if not settle:
            return record
        time.sleep(SETTLE_AFTER_PASS_S if record.passed else SETTLE_AFTER_FAIL_S)
        if not record.passed and target != "lb":
            self._drain()
        return record

    def _drain(self) -> None:
        deadline = time.monotonic() + DRAIN_MAX_S
        left = loadhost.requests_in_nodes()
        while left and time.monotonic() < deadline:
            time.sleep(0.5)
            left = loadhost.requests_in_nodes()
        if left:
            say(f"warning: {left} requests still queued or running on the nodes after {DRAIN_MAX_S} s")

    def _keep_raw(self, files: dict[str, bytes]) -> None:
        """The tool's own summary and messages, beside the step records (not oha's per-request database)."""
        raw = self.paths.root / "raw"
        raw.mkdir(exist_ok=True)
        for name in ("oha.json", "wrk2.json", "stdout", "stderr", "envelope"):
            if files.get(name):
                (raw / f"step-{self.step_number:03d}-{name}").write_bytes(files[name])

    # -- searches -------------------------------------------------------------------------------------------
    def route(self, target: str) -> None:
        """Puts exactly the target's nodes in rotation and checks that they, and only they, answer."""
        nodes_in = IN_ROTATION[target]
        loadhost.set_rotation(nodes_in)
        loadhost.wait_until_up(nodes_in)
        # One user through first (warm-up), which also shows where HAProxy sends the traffic.
        first_user = user_ids(1)[0]
        url = f"{target_url('lb', self.settings)}&user={first_user}"
        seen = self.host.nodes_answering(url, max(self.settings.session_requests, 4 * len(nodes_in)))
        if set(seen) < set(nodes_in):
            # A node just put back may only be behind in the round robin's order (with weights 1:1:1 after
            # two nodes left maintenance, 12 requests went 6:6:0): ask more before calling it missing.
            more = self.host.nodes_answering(url, ROUTING_CHECK_MORE)
            seen = {node: seen.get(node, 0) + more.get(node, 0) for node in {*seen, *more}}
        if set(seen) != set(nodes_in):
            raise loadhost.ClusterError(f"HAProxy should send {target}'s traffic to {', '.join(nodes_in)} "
                                        f"but these answered: {seen}")

    say = staticmethod(say)

    def capacity(self, label: str) -> float | None:
        return capacity_of(self.searches.get(label, []))

    def nodes_down(self, target: str) -> list[str]:
        """The target's nodes HAProxy's checks do not hold up after DOWN_WAIT_S (put in rotation first)."""
        loadhost.set_rotation(IN_ROTATION[target])
        return loadhost.still_down(IN_ROTATION[target], DOWN_WAIT_S)

    def search(self, target: str, label: str | None = None, repeats: int | None = None,
               estimate: float | None = None) -> None:
        """REPEATS capacity searches of the target (or `repeats`), recorded under `label` (default: the target),
        starting near `estimate` (default: for the cluster, the sum of its nodes' capacities). Skipped, and
        said, when a node of the target is down (the run goes on: what it measured stays true)."""
        s = self.settings
        label = label or target
        self.label = label
        down = self.nodes_down(target)
        if down:
            self.skipped[label] = f"{', '.join(down)} down (HAProxy's health checks) for {DOWN_WAIT_S} s"
            say(f"warning: skipping {label}'s search: {self.skipped[label]}")
            self.progress.search_done()
            return
        self.route(target)
        # The routing check's requests end well before the warm-up starts: the request counts of each step
        # (metrics/export.py) run from a sample before it to one after it, and must hold only its traffic.
        time.sleep(SETTLE_AFTER_PASS_S)
        estimate = estimate or self._estimate(target)
        # The warm-up runs at half the rate the search starts at (a quarter of an estimate): enough requests
        # for every node in rotation to have compiled its hot code before the search, whose first steps
        # would otherwise measure the JIT compiler's share of a small CPU quota (a cold 0.3-CPU node3 failed
        # the cluster's first step at 600/s with 48 % of its requests slower than 5 s after 20 s at 25/s).
        warm_rate = max(s.start_rate, estimate / s.growth) if estimate else s.start_rate
        if s.warmup_s > 0:
            self.measure(target, 0, round(warm_rate / 2, 1), "warmup", duration_s=max(s.warmup_s,
                                                                                        self.driver.min_step_s))
        done = self.searches.setdefault(label, [])
        for repeat in range(len(done) + 1, len(done) + 1 + (repeats or s.repeats)):
            previous = [x["capacity_rps"] for x in done if x["capacity_rps"]]
            guess = previous[-1] if previous else estimate
            start = max(s.start_rate, round(guess / s.growth, 1)) if guess else s.start_rate
            try:
                outcome = find_capacity(lambda rate, phase: self.search_step(target, repeat, rate, phase), start,
                                        s.growth, s.precision_pct, s.max_steps)
            except NodeDown as down:  # the search's steps no longer measure the target: end it, go on
                done.append({"repeat": repeat, "start_rps": start, "status": "node-down", "capacity_rps": None,
                             "reason": str(down)})
                self.progress.search_done()
                say(f"warning: {label}'s search ended: {down}")
                return
            done.append({"repeat": repeat, "start_rps": start, **outcome.as_dict()})
            self.progress.search_done()
            capacity = f"{outcome.capacity:g}/s" if outcome.capacity else "none"
            say(f"{label} capacity {capacity} ({outcome.status}: {outcome.reason})")
            for warning in outcome.warnings:
                say(f"warning: {label}: {warning}")

    def search_step(self, target: str, repeat: int, rate: float, phase: str) -> StepRecord:
        """A search's step; a failed one whose target lost a node ends the search: a node HAProxy still holds
        DOWN DOWN_WAIT_S after the step. An overloaded node fails its health checks too (its /health waits
        behind the grinding threads), and passes them again within seconds once the step's load is gone."""
        record = self.measure(target, repeat, rate, phase)
        if not record.passed:
            down = loadhost.still_down(IN_ROTATION[target], DOWN_WAIT_S)
            if down:
                raise NodeDown(f"{', '.join(down)} went down (HAProxy's health checks) during step "
                               f"{record.step} and stayed down {DOWN_WAIT_S} s")
        return record

    def cluster(self) -> None:
        """Each node alone, then the cluster under the balancing WEIGHTS asks for."""
        for node in loadhost.NODES:
            self.search(node)
        if self.settings.weights == "profile":
            self.search("cluster")
            return
        if self.settings.weights == "equal":
            try:
                self.balance("equal", "roundrobin", {node: 1 for node in loadhost.NODES})
                self.search("cluster")
            finally:
                self.restore_balancer()
            return
        capacities = {node: capacity_of(self.searches.get(node, [])) for node in loadhost.NODES}
        missing = [node for node, cap in capacities.items() if not cap]
        if missing:
            raise loadhost.ClusterError(f"WEIGHTS=auto needs each node's capacity; none was found for "
                                        f"{', '.join(missing)}")
        proportional = capacity_weights(capacities)
        try:
            for choice, algorithm, weights in BALANCING:
                self.balance(choice, algorithm,
                             proportional if weights == "capacity" else {node: 1 for node in loadhost.NODES})
                self.search("cluster", label=f"cluster {choice}")
        finally:
            self.restore_balancer()

    def balance(self, choice: str, algorithm: str, weights: dict[str, int]) -> None:
        """Puts the balancer in this configuration: the algorithm needs a new HAProxy (monitoring pauses while
        it is re-created, as its host's logger would lose its pmcd), the weights go through the runtime API."""
        running = self.balancing_running()
        if algorithm != running:
            say(f"balancer: re-creating it with balance {algorithm}")
            self.with_monitoring_paused(lambda: loadhost.recreate_balancer({"LB_BALANCE": algorithm}))
        loadhost.set_weights(weights)
        self.balancing[choice] = {"balance": algorithm, "weights": weights}
        say(f"balancer: {choice}: balance {algorithm}, weights "
            + ", ".join(f"{node} {w}" for node, w in weights.items()))

    def balancing_running(self) -> str:
        chosen = [b["balance"] for b in self.balancing.values()]
        return chosen[-1] if chosen else cluster_settings().get("LB_BALANCE", "roundrobin")

    def restore_balancer(self) -> None:
        """Back to the profile's balancer: its algorithm and weights (the documented end state)."""
        settings = cluster_settings()
        if self.balancing_running() != settings.get("LB_BALANCE", "roundrobin"):
            self.with_monitoring_paused(lambda: loadhost.recreate_balancer(
                {"LB_BALANCE": settings.get("LB_BALANCE", "roundrobin")}))
        loadhost.set_weights({node: int(settings[f"NODE{n}_WEIGHT"]) for n, node in enumerate(loadhost.NODES, 1)})
        self.balancing["restored"] = {"balance": settings.get("LB_BALANCE", "roundrobin")}

    def collect_lb_events(self) -> None:
        """Keeps HAProxy's state changes of the nodes so far (its ring is lost when the lb is re-created)."""
        try:
            changes = lblog.state_changes(self.started)
        except (loadhost.ClusterError, OSError, subprocess.SubprocessError) as problem:
            say(f"warning: HAProxy's state changes could not be read: {problem}")
            return
        for change in changes:
            event = {"epoch": change.at, "node": change.server, "state": change.state, "text": change.text}
            if change.state in ("DOWN", "UP") and event not in self.lb_events:
                self.lb_events.append(event)

    def with_request_log(self, action):
        """Runs `action` with HAProxy logging every request (the balancer re-created with LB_LOG_REQUESTS=1,
        and without it afterwards, whatever happens): bench-failover's and bench-stress's analyses read it."""
        say("balancer: re-creating it with a log of every request (LB_LOG_REQUESTS=1)")
        self.with_monitoring_paused(lambda: loadhost.recreate_balancer({"LB_LOG_REQUESTS": "1"}))
        try:
            return action()
        finally:
            say("balancer: back without the request log")
            self.with_monitoring_paused(lambda: loadhost.recreate_balancer({"LB_LOG_REQUESTS": "0"}))

    def with_monitoring_paused(self, action) -> None:
        self.collect_lb_events()
        logging = self.monitor is not None and self.monitor.logging
        if logging:
            self.monitor.stop()
        action()
        if logging:
            self.start_monitoring()

    def failover_run(self) -> None:
        self.failover = failover.run(self)

    def stress_run(self) -> None:
        self.stress = stress.run(self)

    def variants(self) -> None:
        """The study's steps: each variant's capacity on node1 and on the cluster, with lock evidence."""
        quotas = {node: float(cluster_settings()[f"NODE{n}_CPUS"]) for n, node in enumerate(loadhost.NODES, 1)}
        for variant in self.settings.variants:
            self.use_variant(variant)
            self.search("node1", label=f"node1 {variant}")
            self.gather_evidence("node1", f"node1 {variant}")
            node1 = capacity_of(self.searches.get(f"node1 {variant}", []))
            # The cluster starts near node1's capacity scaled by the quotas (the nodes alone are not measured).
            guess = node1 * sum(quotas.values()) / quotas["node1"] if node1 else None
            self.search("cluster", label=f"cluster {variant}", estimate=guess)
            self.gather_evidence("cluster", f"cluster {variant}")

    def use_variant(self, variant: str) -> None:
        """The requests ask for this variant from now on (the URLs on the load host are written anew)."""
        self.settings = replace(self.settings, variant=variant)
        if self.urls_file:
            base = target_url("lb", self.settings)
            self.host.put(self.urls_file, "".join(f"{base}&user={u}\n" for u in user_ids(self.settings.users))
                          .encode())

    def gather_evidence(self, target: str, label: str) -> None:
        """One more step at the capacity found, with DUMPS_PER_STEP thread dumps of each node in rotation
        spread over it. Kept apart from the search: the dumps (short safepoints) must not move the capacity."""
        capacity = capacity_of(self.searches.get(label, []))
        if not capacity:
            return
        nodes = IN_ROTATION[target]
        pids = {node: loadhost.java_pid(node) for node in nodes}
        dumps: dict[str, list[str]] = {node: [] for node in nodes}
        errors: list[str] = []
        step_s = self.settings.step_s

        def sample(node: str) -> None:
            """Dumps at 1/5, 2/5, 3/5, 4/5 of the step (DUMPS_PER_STEP = 4), each node on its own thread."""
            began = time.monotonic()
            for k in range(1, DUMPS_PER_STEP + 1):
                time.sleep(max(0.0, began + k * step_s / (DUMPS_PER_STEP + 1) - time.monotonic()))
                try:
                    dumps[node].append(loadhost.thread_dump(node, pids[node]))
                except (loadhost.ClusterError, OSError, subprocess.TimeoutExpired) as problem:
                    errors.append(f"{node}: {problem}")

        # The samplers start when the step is sent to the load host; the generator starts within a second.
        samplers = [threading.Thread(target=sample, args=(node,), daemon=True) for node in nodes]
        self.label = label
        for sampler in samplers:
            sampler.start()
        record = self.measure(target, 0, capacity, "evidence")
        for sampler in samplers:
            sampler.join(timeout=60)
        raw = self.paths.root / "raw"
        locks = {}
        for node, texts in dumps.items():
            for k, text in enumerate(texts, start=1):
                (raw / f"step-{record.step:03d}-{node}-threaddump-{k}.txt").write_text(text)
            locks[node] = threaddump.summarize(texts)
        self.evidence[label] = {"step": record.step, "offered_rps": capacity, "passed": record.passed,
                                "p99_ms": record.result.latency_ms.get("p99"), "thread_dumps": locks,
                                "dump_errors": errors}
        for node in nodes:
            say(f"{label} at {capacity:g}/s: {node}: {threaddump.describe(locks[node])}")

    def usl_sweep(self) -> None:
        """node1 alone, one closed-loop step per level of USL_LEVELS, after an open-loop warm-up."""
        s = self.settings
        self.route("node1")
        time.sleep(SETTLE_AFTER_PASS_S)
        if s.warmup_s > 0:
            self.measure("node1", 0, round(s.start_rate / 2, 1), "warmup",
                         duration_s=max(s.warmup_s, self.driver.min_step_s))
        for level in s.usl_levels:
            record = self.measure("node1", 1, 0, "usl", closed_connections=level)
            self.usl_points.append({"n": level, "throughput_rps": record.result.achieved_rps,
                                    "mean_latency_ms": record.result.mean_service_ms, "step": record.step,
                                    "valid": record.valid})

    # -- monitoring -----------------------------------------------------------------------------------------
    def start_monitoring(self) -> None:
        say("monitoring: starting a pmlogger per host on the controller once its metrics exist")
        for line in self.monitor.start():
            say(f"monitoring: {line}")

    def overhead(self) -> None:
        """node1 without and with monitoring, in pairs whose order alternates (off-on, on-off, ...), so a
        drift of the machine during the run does not favour one side."""
        for pair in range(self.settings.repeats):
            for mode in (("off", "on") if pair % 2 == 0 else ("on", "off")):
                if mode == "on":
                    self.start_monitoring()
                try:
                    self.search("node1", label=f"node1 monitor {mode}", repeats=1)
                finally:
                    if mode == "on":
                        self.monitor.stop()

    def finish_monitoring(self) -> None:
        """Stops the loggers, brings their archives home and adds each step's host figures to its record."""
        if self.monitor is None or not self.monitor.sessions:
            return
        self.monitor.stop()
        self.monitor.collect()
        say(f"monitoring: archives in {self.monitor.pcp_dir}; exporting each step's window with pmrep")
        records = read_jsonl(self.paths.steps)
        sessions = [(s["started_epoch"], s.get("ended_epoch", time.time())) for s in self.monitor.sessions]
        logged = [r for r in records if any(a <= r["start_epoch"] and r["end_epoch"] <= b for a, b in sessions)]
        try:
            enriched = {r["step"]: r for r in export.export_run(self.monitor.pcp_dir, self.paths.root / "pcp-export",
                                                                 logged, cluster_settings())}
        except export.ExportError as problem:
            say(f"warning: the step figures could not be exported: {problem} (the archives are kept)")
            return
        write_jsonl(self.paths.steps, [enriched.get(r["step"], r) for r in records])

    def _estimate(self, target: str) -> float | None:
        """A first guess to start from: the cluster starts near the sum of its nodes' capacities."""
        if target != "cluster":
            return None
        caps = [capacity_of(self.searches.get(n, [])) for n in loadhost.NODES]
        return sum(caps) if all(caps) else None

    def selfcheck_run(self) -> tuple[str, str | None, int]:
        verdict = self.selfcheck(selfcheck_rate(self.settings))
        self.searches["lb"] = [{"selfcheck": verdict, "status": "selfcheck", "capacity_rps": None}]
        if verdict["passed"]:
            return "complete", None, 0
        return "failed", "the generator did not keep the offered rate", 1

    def selfcheck(self, rate: float) -> dict:
        record = self.measure("lb", 1, rate, "selfcheck", url=SELFCHECK_URL,
                              duration_s=max(self.settings.step_s, self.driver.min_step_s))
        r = record.result
        within = abs(r.achieved_pct - 100) <= SELFCHECK_TOLERANCE_PCT
        usage = r.loadhost
        verdict = {"offered_rps": rate, "achieved_rps": r.achieved_rps, "achieved_pct": round(r.achieved_pct, 2),
                   "within_tolerance": within, "tolerance_pct": SELFCHECK_TOLERANCE_PCT, "valid": record.valid,
                   "invalid_reason": record.invalid_reason, "p99_ms": r.latency_ms.get("p99"),
                   "send_lag_ms_p99": r.send_lag_ms_p99,
                   "loadhost_cpu_pct": round(usage.cpu_pct, 1) if usage else None,
                   "loadhost_cpu_cores": round(usage.cpu_seconds / usage.wall_seconds, 3) if usage else None,
                   "loadhost_cpus": usage.cpus_available if usage else None,
                   "passed": within and record.valid and r.failures == 0}
        say(f"self-check at {rate:g}/s on {SELFCHECK_URL}: achieved {r.achieved_rps:g}/s "
            f"({r.achieved_pct:.2f}% of offered, allowed ±{SELFCHECK_TOLERANCE_PCT:g}%), failures {r.failures}, "
            f"load host CPU {verdict['loadhost_cpu_cores']} cores = {verdict['loadhost_cpu_pct']}% of its "
            f"{verdict['loadhost_cpus']:g} CPUs → {'generator keeps up' if verdict['passed'] else 'NOT OK'}")
        return verdict


def found_capacities(searches: list[dict]) -> list[float]:
    """The capacities a target's repeated searches found."""
    return [s["capacity_rps"] for s in searches if s.get("capacity_rps") and s.get("status") == "found"]


def capacity_of(searches: list[dict]) -> float | None:
    """The median capacity over a target's repeated searches (None when none found one)."""
    caps = found_capacities(searches)
    return statistics.median(caps) if caps else None


def summarize(bench: Bench, status: str, error: str | None, started: float) -> dict:
    targets = {}
    for target, searches in bench.searches.items():
        caps = found_capacities(searches)
        targets[target] = {"capacity_rps": capacity_of(searches), "repeats": caps,
                           "min_rps": min(caps) if caps else None, "max_rps": max(caps) if caps else None,
                           "spread_pct": round(100 * (max(caps) - min(caps)) / statistics.median(caps), 1)
                           if len(caps) > 1 else None,
                           "searches": searches}
    node_caps = [targets.get(n, {}).get("capacity_rps") for n in loadhost.NODES]
    cluster = targets.get("cluster", {}).get("capacity_rps")
    node_sum = sum(node_caps) if all(node_caps) else None
    summary = {"run_id": bench.run_id, "kind": bench.kind, "status": status, "error": error,
               "driver": {"name": bench.driver.name, "version": bench.version}, "slo": vars(bench.settings.slo),
               "targets": targets, "steps": bench.step_number}
    if bench.kind == "cluster":
        node1 = node_caps[0]

        def gains(x: float | None) -> dict:
            return {"efficiency": round(x / node_sum, 3) if x and node_sum else None,
                    "cluster_over_node1": round(x / node1, 3) if x and node1 else None}
        if bench.balancing:  # WEIGHTS=equal or auto: the cluster measured under each balancing choice
            summary["balancing"] = {
                choice: {**b, "capacity_rps": targets.get(f"cluster {choice}", targets.get("cluster", {}))
                         .get("capacity_rps"), "label": f"cluster {choice}" if f"cluster {choice}" in targets
                         else "cluster"} for choice, b in bench.balancing.items() if choice != "restored"}
            for b in summary["balancing"].values():
                b.update(gains(b["capacity_rps"]))
            if cluster is None:  # WEIGHTS=auto: the cluster's capacity is the one under capacity weights
                cluster = summary["balancing"].get("weighted", {}).get("capacity_rps")
        summary.update({"sum_nodes_rps": node_sum, "cluster_rps": cluster, **gains(cluster)})
    if bench.kind == "variants":
        summary["variants"] = variants_summary(bench, targets)
    for name, analysis in (("failover", bench.failover), ("stress", bench.stress)):
        if analysis is not None:  # the whole analysis beside, the summary without its series
            write_json(bench.paths.root / f"{name}.json", analysis)
            summary[name] = {k: v for k, v in analysis.items() if k not in ("per_second", "failed_times_s")}
    summary["lb_events"] = [{**e, "t_s": round(e["epoch"] - started, 3)} for e in bench.lb_events]
    if bench.skipped:
        summary["skipped"] = bench.skipped
    disturbed, flaps = disturbances(read_jsonl(bench.paths.steps), bench.lb_events, time.time()) \
        if bench.kind not in ("failover", "stress") else ({}, {})
    if flaps:
        summary["lb_flaps"] = flaps
    if disturbed:
        summary["disturbed"] = disturbed
        for label, why in disturbed.items():
            say(f"warning: {label}'s steps ran while {'; '.join(why)}: its capacity is not that of healthy nodes")
    if bench.kind == "overhead":
        summary["overhead"] = overhead_ratio(targets)
    if bench.kind == "usl":
        summary["usl_points"] = [p for p in bench.usl_points if p["valid"] and p["throughput_rps"] > 0]
        summary["usl_fit"] = usl_fit(summary["usl_points"])
    if bench.monitor is not None:
        summary["monitoring"] = bench.monitor.summary()
        records = read_jsonl(bench.paths.steps)
        for label, target in targets.items():
            target["metrics_at_capacity"] = metrics_at(records, label, target["capacity_rps"])
    summary["elapsed_s"] = round(time.time() - started, 1)
    return summary


def disturbances(records: list[dict], events: list[dict], until: float) -> tuple[dict, dict]:
    """Per label, the outages of its target's nodes while its steps ran: a node DOWN for DOWN_WAIT_S or more
    (killed, crashed), or until `until`. A shorter DOWN is an overloaded node failing its health checks in a
    failed step (its /health waits behind the grinding threads): counted per label as a flap, no warning."""
    windows: dict[str, list[float]] = {}
    targets: dict[str, str] = {}
    for record in records:
        label = record.get("label") or record["target"]
        window = windows.setdefault(label, [record["start_epoch"], record["end_epoch"]])
        window[0], window[1] = min(window[0], record["start_epoch"]), max(window[1], record["end_epoch"])
        targets[label] = record["target"]
    outages: dict[str, list[str]] = {}
    flaps: dict[str, int] = {}
    for label, (start, end) in windows.items():
        nodes = IN_ROTATION.get(targets[label], ())
        for event in events:
            if event["state"] != "DOWN" or event["node"] not in nodes or not start <= event["epoch"] <= end:
                continue
            back = min((e["epoch"] for e in events if e["node"] == event["node"] and e["state"] == "UP"
                        and e["epoch"] > event["epoch"]), default=until)
            if back - event["epoch"] >= DOWN_WAIT_S:
                at = time.strftime("%H:%M:%S", time.localtime(event["epoch"]))
                outages.setdefault(label, []).append(
                    f"{event['node']} went DOWN at {at} for {back - event['epoch']:.0f} s")
            else:
                flaps[label] = flaps.get(label, 0) + 1
    return outages, flaps


def variants_summary(bench: Bench, targets: dict) -> dict:
    """Per variant: node1's and the cluster's capacity, the scale-out gain, and each evidence step."""
    out = {}
    for variant in bench.settings.variants:
        node1 = targets.get(f"node1 {variant}", {}).get("capacity_rps")
        cluster = targets.get(f"cluster {variant}", {}).get("capacity_rps")
        out[variant] = {"node1_rps": node1, "cluster_rps": cluster,
                        "cluster_over_node1": round(cluster / node1, 3) if node1 and cluster else None,
                        "evidence": {where: bench.evidence.get(f"{where} {variant}") for where in ("node1", "cluster")}}
    return out


def usl_fit(points: list[dict]) -> dict:
    """The USL fitted to the sweep's valid points, or why it could not be."""
    try:
        fit = usl.fit([p["n"] for p in points], [p["throughput_rps"] for p in points])
    except usl.UslError as problem:
        return {"error": str(problem)}
    return fit.as_dict()


def print_usl(summary: dict) -> None:
    print(f"\n{'connections':>11}{'X /s':>10}{'X/N /s':>9}{'mean ms':>9}{'N = X·R':>9}   (closed loop, node1)")
    for p in summary.get("usl_points", []):
        mean = p.get("mean_latency_ms")
        little = f"{p['throughput_rps'] * mean / 1000:.1f}" if mean else "-"
        print(f"{p['n']:>11}{p['throughput_rps']:>10.1f}{p['throughput_rps'] / p['n']:>9.1f}"
              f"{mean if mean is not None else '-':>9}{little:>9}")
    fit = summary.get("usl_fit") or {}
    if "error" in fit:
        print(f"USL: no fit: {fit['error']}")
    elif fit:
        peak = f"N* = {fit['peak_n']:.1f} (X {fit['peak_x']:.1f}/s)" if fit.get("peak_n") else "no peak (κ ≈ 0)"
        err = {k: f"{fit[k]:.2g}" if fit.get(k) is not None else "?" for k in ("sigma_err", "kappa_err", "lam_err")}
        print(f"USL: σ = {fit['sigma']:.4f} ± {err['sigma_err']}  κ = {fit['kappa']:.6f} ± {err['kappa_err']}  "
              f"λ = {fit['lam']:.1f} ± {err['lam_err']}/s  {peak}  R² = {fit['r_squared']:.4f}")
        for caveat in fit.get("caveats", []):
            print(f"USL: note: {caveat}")


def of_label(record: dict, label: str) -> bool:
    """Whether a step belongs to a search label ("node1", "cluster v2", "node1 monitor on"); steps recorded
    before steps carried their label belong to the label's first word, their target."""
    return record["label"] == label if "label" in record else record["target"] == label.split()[0]


def metrics_at(records: list[dict], label: str, capacity: float | None) -> dict | None:
    """The host figures of the label's last logged, passed search step at the capacity found (with REPEATS,
    the median's rate may not have been measured: then None). Evidence steps (thread dumps) are left out."""
    if capacity is None:
        return None
    at = [r for r in records if of_label(r, label) and r.get("passed") and r["offered_rps"] == capacity
          and "host_metrics" in r and r.get("phase") != "evidence"]
    return {"step": at[-1]["step"], **at[-1]["host_metrics"]} if at else None


def overhead_ratio(targets: dict) -> dict:
    """Capacity with monitoring over capacity without it: per pair, and of the medians."""
    off = targets.get("node1 monitor off", {}).get("repeats", [])
    on = targets.get("node1 monitor on", {}).get("repeats", [])
    pairs = [round(b / a, 3) for a, b in zip(off, on) if a and b]
    median_off = statistics.median(off) if off else None
    median_on = statistics.median(on) if on else None
    return {"capacity_off_rps": median_off, "capacity_on_rps": median_on,
            "ratio_on_over_off": round(median_on / median_off, 3) if median_off and median_on else None,
            "pair_ratios": pairs, "goal": 0.98}


def print_table(summary: dict) -> None:
    rows = [(name, t) for name, t in summary["targets"].items()]
    width = max([10] + [len(name) + 2 for name, _ in rows])  # bench-overhead's labels are longer
    print(f"\n{'target':<{width}}{'capacity/s':>12}{'repeats':>10}{'min..max/s':>22}  "
          f"driver {summary['driver']['name']}")
    for name, t in rows:
        cap = f"{t['capacity_rps']:.1f}" if t["capacity_rps"] else "none"
        span = f"{t['min_rps']:.1f}..{t['max_rps']:.1f}" if t["min_rps"] else "-"
        print(f"{name:<{width}}{cap:>12}{len(t['repeats']):>10}{span:>22}")
    if summary["kind"] == "cluster":
        def fmt(value, unit=""):
            return f"{value:.1f}{unit}" if isinstance(value, float) and unit else (
                f"{value:.3f}" if isinstance(value, float) else "n/a")
        print(f"{'ΣX_i':<10}{fmt(summary['sum_nodes_rps'], '/s'):>12}")
        print(f"{'X_cluster':<10}{fmt(summary['cluster_rps'], '/s'):>12}")
        print(f"E = X_cluster / ΣX_i = {fmt(summary['efficiency'])}    "
              f"X_cluster / X_node1 = {fmt(summary['cluster_over_node1'])}")
    for choice, b in summary.get("balancing", {}).items():
        weights = ":".join(str(w) for w in b["weights"].values())
        print(f"  balancing {choice:<10} balance {b['balance']:<10} weights {weights:<10} "
              f"X_cluster {fmt(b['capacity_rps'], '/s') if b['capacity_rps'] else 'none':>9}  E {fmt(b['efficiency'])}")


def print_variants(summary: dict) -> None:
    """The study's table: each variant on node1 and on the cluster, with what the evidence steps showed."""
    print(f"\n{'variant':<10}{'node1 /s':>9}{'cluster /s':>11}{'cl/node1':>9}   at node1's capacity: "
          "alloc MB/s, GC %, CPU % of quota; request threads")
    for variant, v in summary.get("variants", {}).items():
        node1 = summary["targets"].get(f"node1 {variant}", {}).get("metrics_at_capacity") or {}
        figures = node1.get("node1") or {}
        dumps = ((v["evidence"].get("node1") or {}).get("thread_dumps") or {}).get("node1")
        cells = [f"{v[k]:.1f}" if v[k] else "none" for k in ("node1_rps", "cluster_rps")]
        gain = f"{v['cluster_over_node1']:.2f}" if v["cluster_over_node1"] else "-"
        print(f"{variant:<10}{cells[0]:>9}{cells[1]:>11}{gain:>9}   {figures.get('alloc_mb_per_s', '-')} MB/s, "
              f"GC {figures.get('gc_time_pct', '-')} %, CPU {figures.get('cpu_pct_of_quota', '-')} %; "
              f"{threaddump.describe(dumps) if dumps else 'no thread dumps'}")


def print_host_figures(summary: dict) -> None:
    """At each target's capacity: what the nodes did (from PCP), and the step's requests counted by Tomcat's
    grind servlet against the responses HAProxy counted for that node."""
    rows = [(name, t["metrics_at_capacity"]) for name, t in summary["targets"].items()
            if t.get("metrics_at_capacity")]
    if rows:
        print(f"\nat capacity (PCP)  {'node':<6}{'CPU % quota':>12}{'GC %':>7}{'alloc MB/s':>11}{'busy thr':>9}"
              f"{'heap MB':>9}{'Tomcat n':>10}{'HAProxy n':>10}{'diff %':>8}")
    for name, figures in rows:
        for node in loadhost.NODES:
            f = figures.get(node)
            if not f or not f.get("grind_requests_per_s"):
                continue
            check = figures.get("requests_cross_check", {}).get(node, {})
            cells = [f.get("cpu_pct_of_quota"), f.get("gc_time_pct"), f.get("alloc_mb_per_s"),
                     f.get("busy_threads_mean"), f.get("heap_used_mb_mean"), check.get("tomcat_requests"),
                     check.get("haproxy_responses"), check.get("diff_pct")]
            text = "".join(f"{'-' if v is None else v:>{w}}" for v, w in zip(cells, (12, 7, 11, 9, 9, 10, 10, 8)))
            print(f"{name:<19}{node:<6}{text}")
    overhead = summary.get("overhead")
    if overhead:
        print(f"\nmonitoring overhead: capacity off {overhead['capacity_off_rps']}/s, "
              f"on {overhead['capacity_on_rps']}/s, on/off = {overhead['ratio_on_over_off']} "
              f"(pairs {overhead['pair_ratios']}; goal >= {overhead['goal']})")


def finish_report(paths: RunPaths, summary: dict) -> None:
    """One line in results/history.jsonl and report.html; a failure here loses nothing already written."""
    try:
        history.append(results_dir() / "history.jsonl",
                       history.history_line(json.loads(paths.run_json.read_text()), summary))
        say(f"report: {report_build.build(paths.root)}")
    except Exception as problem:  # noqa: BLE001 — the run's results are on disk; say what failed, keep going
        say(f"warning: the report could not be made ({type(problem).__name__}: {problem}); "
            f"retry with make report RUN={paths.root.name}")


def refuse(problem: Exception) -> int:
    """Bad input: each problem on a line of its own, before anything starts; exit status 2."""
    for line in str(problem).splitlines():
        print(f"capbench: {line}", file=sys.stderr)
    return 2


def cluster_not_up() -> bool:
    down = loadhost.unhealthy_services()
    if down:
        print(f"capbench: the cluster is not up ({', '.join(down)} not running and healthy): run make up first",
              file=sys.stderr)
    return bool(down)


def _interrupt(signum, frame) -> None:
    """SIGTERM ends a run as Ctrl-C does: completed steps kept, marked partial."""
    raise KeyboardInterrupt


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m load.bench", description=__doc__.split("\n\n")[0])
    parser.add_argument("kind", choices=sorted(TARGETS), help="what to measure")
    parser.add_argument("--check-only", action="store_true", help="check the settings and the driver, run nothing")
    args = parser.parse_args(argv)
    kind = args.kind
    try:
        settings = load_settings()
        check_profile()
        driver, wrk2_local = choose_driver(settings, dict(os.environ), closed_loop=kind == "usl")
        settings = check_for_driver(settings, driver.name)
    except SettingsError as problem:
        return refuse(problem)
    try:
        # Held until this process exits. --check-only (make's first call, before cluster/up.sh) takes it
        # too and lets it go: a running bench's cluster is not changed under it by the next one's `up`.
        lock = runlock.acquire(f"make bench-{kind}")
    except runlock.Busy as busy:
        return refuse(busy)
    if args.check_only:
        return 0
    if cluster_not_up():
        return 2

    run_id, paths = new_run(kind)
    bench = Bench(kind, settings, driver, wrk2_local, run_id, paths)
    say(f"run {run_id}: {kind} with {driver.name}, {settings.variant} level {settings.level}, "
        f"{settings.scenario} scenario, steps of {settings.step_s} s → {paths.root}")
    signal.signal(signal.SIGTERM, _interrupt)
    bodies = {"overhead": bench.overhead, "usl": bench.usl_sweep, "selfcheck": bench.selfcheck_run,
              "cluster": bench.cluster, "variants": bench.variants, "failover": bench.failover_run,
              "stress": bench.stress_run}
    summary, code = execute(bench, bodies.get(kind, lambda: bench.search("node1")))
    report(bench, summary)
    lock.close()
    return code


def execute(bench: Bench, body) -> tuple[dict, int]:
    """Runs `body` (the bench's measurements) with monitoring around it, and always writes what was measured:
    steps, archives, run.json and summary.json; PARTIAL stays when it did not end normally. A body may return
    (status, error, exit code) for an outcome of its own (the self-check's verdict)."""
    paths, kind = bench.paths, bench.kind
    paths.partial_marker.write_text("this run has not ended normally\n")
    started = time.time()
    status, error, code = "complete", None, 0
    try:
        bench.prepare()
        write_json(paths.run_json, bench.run_json())
        if bench.monitor is not None and kind != "overhead":
            bench.start_monitoring()
        outcome = body()
        if outcome:
            status, error, code = outcome
    except KeyboardInterrupt:
        status, error, code = "partial", "interrupted", 130
        say("interrupted: keeping the completed steps; a generator still running on the load host was stopped")
    except (loadhost.ClusterError, DriverError, OSError) as problem:
        status, error, code = "partial", str(problem), 1
        say(f"stopped: {problem}")
    finally:
        if kind != "selfcheck":
            try:
                loadhost.set_rotation(loadhost.NODES)  # documented end state: every node in rotation
            except (loadhost.ClusterError, OSError) as problem:
                say(f"could not put every node back in rotation: {problem}")
        try:
            bench.finish_monitoring()
        except (loadhost.ClusterError, OSError, KeyboardInterrupt) as problem:
            say(f"warning: monitoring did not finish cleanly: {problem or 'interrupted'}")
        if not paths.run_json.exists():
            write_json(paths.run_json, bench.run_json())
        bench.collect_lb_events()
        summary = summarize(bench, status, error, started)
        write_json(paths.summary, summary)
        if status != "partial":
            paths.partial_marker.unlink()
    return summary, code


def report(bench: Bench, summary: dict) -> None:
    """The console's tables, the history line and report.html."""
    kind = bench.kind
    if kind == "usl":
        print_usl(summary)
    if kind == "variants":
        print_variants(summary)
    if kind != "selfcheck":
        if kind != "usl":
            print_table(summary)
        print_host_figures(summary)
        finish_report(bench.paths, summary)
    say(f"{summary['status']}: {len(read_jsonl(bench.paths.steps))} steps in {_mmss(summary['elapsed_s'])} "
        f"→ {bench.paths.root}")


if __name__ == "__main__":
    sys.exit(main())
