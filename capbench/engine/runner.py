"""A bench run: the Bench (what every kind measures with: the run's settings, driver and results folder, and its
parts: the steps on the load hosts, the searches, the balancer, monitoring and HAProxy's events) and execute(),
which wraps a kind's run() with what every run needs: the partial marker, run.json, PCP around the
measurements, every node back in rotation, summary.json written whatever happened, and the exit status."""
from __future__ import annotations

import platform
import subprocess
import time
from pathlib import Path

from capbench.engine import ceiling_probe, handshake_probe, profile_step
from capbench.engine.balancing import Balancer, LbEvents
from capbench.engine.calibration_probe import calibrate
from capbench.engine.kind import Kind
from capbench.engine.measuring import StepRunner
from capbench.engine.monitoring import Monitoring
from capbench.engine.progress import STEPS_PER_SEARCH_GUESS, Progress, say
from capbench.engine.run_summary import summarize
from capbench.engine.searcher import Searcher
from capbench.hosts import haproxy, jvm, topology
from capbench.hosts.backend import ClusterError, backend
from capbench.hosts.balancer_address import node_http, tls
from capbench.hosts.cluster_settings import cluster_settings, profile_name, with_application
from capbench.load.drivers import DriverError
from capbench.load.drivers.wrk2 import LOADHOST_BINARY
from capbench.load.load_hosts import LoadHosts
from capbench.load.loadhost import WORK_DIR
from capbench.load.node_http_facts import node_http_record
from capbench.load.tls_facts import tls_record
from capbench.metrics.monitor import Monitor
from capbench.rundata import jsonl
from capbench.rundata.layout import RunPaths, git_sha
from capbench.rundata.run import RunRecord
from capbench.rundata.summary import Summary
from capbench.settings.bench import BenchSettings


class Bench:
    """A run's context. Its parts, each given what it uses: `steps` (StepRunner: the steps on the load hosts and
    the settings they run with), `searcher` (Searcher: the capacity searches, with the steps), `monitoring`
    (Monitoring: PCP), `lb_events` (LbEvents: HAProxy's DOWN/UP events) and `balancer` (Balancer: its algorithm,
    weights and request log, with monitoring paused and the events kept around a re-creation). The kinds call
    the parts, or the thin methods below for what they use most."""

    def __init__(self, kind: Kind, settings: BenchSettings, driver, wrk2_local: Path | None, run_id: str,
                 paths: RunPaths, searches: int | None = None, cluster_env: dict[str, str] | None = None):
        """searches: how many capacity searches the run will make, where not the kind's own plan (make tune).
        cluster_env: the cluster's settings over this process's environment (make tune's point)."""
        self.kind = kind
        self.driver = driver
        self.wrk2_local = wrk2_local
        self.run_id = run_id
        self.paths = paths
        self.cluster_env = cluster_env or {}
        self.loads = LoadHosts()
        self.version = "unknown"
        self.found = kind.findings() if kind.findings is not None else None  # the kind's findings record
        self.profiles: dict[str, dict] = {}  # JFR: per label, the profile at its capacity (capbench/engine/profile_step.py)
        self.calibration: dict | None = None  # the machine's speed at the start (capbench/engine/calibration_probe.py)
        self.ceiling_check: dict | None = None  # the testbed's ceiling, checked directly (capbench/engine/ceiling_probe.py)
        self.tls: dict | None = None  # TLS=lb: its certificates and what a connection negotiated (capbench/load/tls_facts.py)
        self.node_http: dict | None = None  # NODE_HTTP=2: what the nodes were spoken to in (capbench/load/node_http_facts.py)
        self.profiling = profile_step.wanted(settings, kind)
        planned = kind.planned_searches(settings) if searches is None else searches
        progress = Progress(planned, settings.step_s, StepRunner.SETTLE_AFTER_PASS_S,
                            kind.steps_per_search(settings)
                            or STEPS_PER_SEARCH_GUESS + max(0, settings.hold_windows - 1),  # the hold's windows
                            kind.after_searches(settings))
        self.steps = StepRunner(settings, driver, self.loads, run_id, f"{WORK_DIR}/{run_id}", paths, progress)
        self.searcher = Searcher(self.steps, self.loads.first, progress)
        wanted = settings.monitor or kind.needs.always_monitored
        self.monitoring = Monitoring(Monitor(run_id, paths.pcp) if wanted else None, paths)
        self.lb_events = LbEvents(time.time())
        self.balancer = Balancer(self.monitoring, self.lb_events, self.cluster_env)
        self.searcher.recreate_nodes = lambda nodes: self.with_monitoring_paused(
            lambda: backend().recreate(nodes, self.cluster_env, fresh=True))

    @property
    def settings(self) -> BenchSettings:
        """The settings the steps run with now (steps.change_settings() switches them)."""
        return self.steps.settings

    def search(self, target: str, label: str | None = None, repeats: int | None = None,
               estimate: float | None = None, profile: bool = True) -> None:
        """The target's searches; then, when the run profiles (JFR) and `profile`, the profile
        at the capacity found."""
        if profile and self.profiling:
            profile_step.load_recorders(topology.IN_ROTATION[target])  # before the search: its warm-up absorbs the loading
        self.searcher.search(target, label, repeats, estimate)
        if profile and self.profiling:
            profile_step.profile_at_capacity(self, target, label or target)

    def capacity(self, label: str) -> float | None:
        return self.searcher.capacity(label)

    def route(self, target: str) -> None:
        self.searcher.route(target)

    def with_monitoring_paused(self, action) -> None:
        """Runs `action` (a node or the balancer re-created) with the loggers paused, HAProxy's events kept first."""
        self.lb_events.collect()
        self.monitoring.paused(action)

    def cluster_settings(self) -> dict[str, str]:
        """The cluster's settings as this run's cluster runs with them."""
        return cluster_settings(self.cluster_env)

    def prepare(self) -> None:
        """Copies the user's wrk2 and the scenario's dataset to each load host; records the driver version; times
        the machine (calibration)."""
        if self.wrk2_local is not None:
            self.loads.put_binary(self.wrk2_local, LOADHOST_BINARY)
        self.version = self.loads.record_versions(self.driver)
        self.tls = tls_record(self.loads.first)
        cluster = self.cluster_settings()
        self.node_http = node_http_record(self.loads.first, cluster)
        self.steps.node_http = node_http(cluster)
        if self.kind.needs.users and (self.settings.scenario == "session" or self.settings.user_scenario is not None):
            self.steps.put_dataset()
        self.calibration = calibrate(self.loads.first, topology.NODES)
        if self.kind.needs.reports:  # the benches whose figures a reader takes for the application's
            self.ceiling_check = ceiling_probe.ensure(self)
            if self.tls is not None:  # what a handshake costs where TLS ends: the TLS-bound hint's price
                self.tls["handshake_cost"] = handshake_probe.measure(self.loads.first, tls(), self.measured_nodes())

    def measured_nodes(self) -> tuple[str, ...]:
        """The nodes the kind's targets put in rotation (a label's first word: "cluster weighted" is the cluster)."""
        rotation = topology.IN_ROTATION
        served = {node for label in self.kind.targets for node in rotation.get(label, rotation.get(label.split()[0], ()))}
        return tuple(node for node in topology.NODES if node in served)

    def run_record(self) -> RunRecord:
        """run.json: what this run is, as it starts."""
        chosen = backend()
        return RunRecord(
            run_id=self.run_id, kind=self.kind.name, settings=self.settings.as_dict(),
            driver={"name": self.driver.name, "version": self.version,
                    "binary": str(self.wrk2_local) if self.wrk2_local else None},
            load_hosts=self.loads.versions_of(self.driver),
            profile=profile_name(), cluster_settings=with_application(self.cluster_settings()),
            backend=chosen.name, backend_version=chosen.version(), targets=list(self.kind.targets),
            harness={"python": platform.python_version(), "host": platform.node()},
            git_sha=git_sha(), nodes={node: jvm.node_info(node) for node in topology.NODES},
            calibration=self.calibration, testbed_ceiling=self.ceiling_check, tls=self.tls,
            node_http=self.node_http,
            started_epoch=time.time())


def execute(bench: Bench, body=None, extra: dict | None = None) -> tuple[dict, int]:
    """Runs the kind's run() (or `body`) with monitoring around it, and always writes what was measured: steps,
    archives, run.json and summary.json (with `extra` added); PARTIAL stays when it did not end normally. run()
    may return (status, error, exit code) for an outcome of its own (the self-check's verdict)."""
    paths, kind = bench.paths, bench.kind
    paths.partial_marker.write_text("this run has not ended normally\n")
    started = time.time()
    status, error, code = "complete", None, 0
    try:
        bench.prepare()
        jsonl.write_json(paths.run_json, bench.run_record().to_json())
        if bench.monitoring.monitor is not None and kind.needs.logs_whole_run:
            bench.monitoring.start()
        outcome = body() if body is not None else kind.run(bench, bench.found)
        if outcome:
            status, error, code = outcome
        bench.searcher.losses.sweep("asked at the run's end")
        if status == "complete" and bench.searcher.losses.events:
            status = "degraded"  # it ended, but not with every host it began with: never a clean success
    except KeyboardInterrupt:
        status, error, code = "partial", "interrupted", 130
        say("interrupted: keeping the completed steps; a generator still running on the load host was stopped")
        bench.searcher.losses.sweep("asked when the run was interrupted")
    except (ClusterError, DriverError, OSError, subprocess.TimeoutExpired) as problem:
        status, error, code = "partial", str(problem), 1
        say(f"stopped: {problem}")
        # A host that stopped answering may have taken its machine with it: named, with every role it ran.
        bench.searcher.losses.sweep(f"the run stopped ({str(problem)[:120]})")
    except Exception as problem:  # a defect of ours: the summary says the run broke off, the traceback follows
        status, error, code = "partial", f"{type(problem).__name__}: {problem}", 1
        raise
    finally:
        if kind.needs.restores_rotation:
            try:
                haproxy.set_rotation(topology.NODES)  # documented end state: every node in rotation
            except (ClusterError, OSError) as problem:
                say(f"could not put every node back in rotation: {problem}")
        try:
            bench.monitoring.finish()
        except (ClusterError, OSError, KeyboardInterrupt) as problem:
            say(f"warning: monitoring did not finish cleanly: {problem or 'interrupted'}")
        if not paths.run_json.exists():
            jsonl.write_json(paths.run_json, bench.run_record().to_json())
        bench.lb_events.collect()
        summary = Summary.from_json({**summarize(bench, status, error, started), **(extra or {})}).to_json()
        jsonl.write_json(paths.summary, summary)
        if status != "partial":
            paths.partial_marker.unlink()
    return summary, code
