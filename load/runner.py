"""A bench run: the Bench (what every kind measures with: the run's settings, driver, results folder, the step
on the load host, and its search, balancer and monitoring halves) and execute(), which wraps a kind's run()
with what every run needs: the partial marker, run.json, PCP around the measurements, every node back in
rotation, summary.json written whatever happened, and the exit status."""
from __future__ import annotations

import math
import platform
import subprocess
import time
from pathlib import Path

from hosts import haproxy, jvm
from hosts.backend import ClusterError, backend
from hosts.settings import cluster_settings, profile_name
from hosts.topology import NODES
from load.balancing import Balancing
from load.calibration import calibrate
from load.drivers import DriverError, StepPlan
from load.drivers.wrk2 import LOADHOST_BINARY
from load.generators import LoadHosts
from load.kinds.base import Kind
from load.loadhost import WORK_DIR
from load.monitoring import Monitoring
from load.progress import STEPS_PER_SEARCH_GUESS, Progress, say
from load.scenario import connections_for, target_url, user_ids
from load.searching import Searching
from load.settings import MAX_CONNECTIONS, BenchSettings
from load.step import judge
from load.summary import summarize
from metrics.monitor import Monitor
from rundata import jsonl
from rundata.layout import RunPaths, git_sha
from rundata.records import SEARCH_PHASES, StepRecord
from rundata.run import RUN_SCHEMA

RAW_FILES = ("oha.json", "wrk2.json", "stdout", "stderr", "envelope")  # kept per step (not oha's request database)


class Bench(Searching, Balancing, Monitoring):
    # Pause after a step before the next; after a failed one, also wait until the requests an overloaded step
    # left queued in HAProxy or running on the nodes are done (up to DRAIN_MAX_S), so the next step starts clean.
    # The pause after a failure lets the garbage and the work an overload left behind settle; a step shorter than
    # 10 s (QUICK's 5 s) left at most half a step's worth of it, so it waits half a step.
    # A search step's first seconds (at most a fifth of it) are its ramp, recorded apart from its verdict: oha
    # opens its connections, HAProxy its own to the nodes, Tomcat grows its pool. In a 20 s step at 775/s on
    # node1 the first two seconds' p99 was 450 ms against 5-50 ms for most of the rest, and decided the step's
    # p99 (345 ms). wrk2 leaves out its first 10 s the same way (its calibration).
    RAMP_S = 2.0
    RAMPED_PHASES = ("warmup", *SEARCH_PHASES, "selfcheck", "gate")
    SETTLE_AFTER_PASS_S = 1
    SETTLE_AFTER_FAIL_S = 5
    DRAIN_MAX_S = 120

    def __init__(self, kind: Kind, settings: BenchSettings, driver, wrk2_local: Path | None, run_id: str,
                 paths: RunPaths, searches: int | None = None):
        """searches: how many capacity searches the run will make, where not the kind's own plan (make tune)."""
        self.kind = kind
        self.settings = settings
        self.driver = driver
        self.wrk2_local = wrk2_local
        self.run_id = run_id
        self.paths = paths
        self.loads = LoadHosts()
        self.host = self.loads.first
        self.step_number = 0
        self.work_dir = f"{WORK_DIR}/{run_id}"
        self.version = "unknown"
        self.users_file: str | None = None
        self.urls_file: str | None = None
        self.searches: dict[str, list[dict]] = {}  # per label, each repeat's search
        self.label: str | None = None  # what the steps being measured belong to, e.g. "node1 v2", "cluster equal"
        self.skipped: dict[str, str] = {}  # per label, why its search did not run (its nodes were down)
        self.balancing: dict[str, dict] = {}  # per balancing choice, the balance and weights measured under
        self.lb_events: list[dict] = []  # HAProxy's DOWN/UP state changes of the nodes during the run
        self.findings: dict[str, object] = {}  # what a kind measured beyond searches, for its summarize()
        self.calibration: dict | None = None  # the machine's speed at the start (load/calibration.py)
        self.warmups: list[dict] = []  # each warm-up's windows and whether it became steady (load/warmup.py)
        self.started = time.time()
        planned = kind.planned_searches(settings) if searches is None else searches
        self.progress = Progress(planned, settings.step_s, self.SETTLE_AFTER_PASS_S,
                                 kind.steps_per_search(settings) or STEPS_PER_SEARCH_GUESS)
        wanted = settings.monitor or kind.always_monitored
        self.monitor = Monitor(run_id, paths.pcp) if wanted else None

    def prepare(self) -> None:
        """Copies the user's wrk2 and the scenario's dataset to each load host; records the driver version; times
        the machine (calibration)."""
        if self.wrk2_local is not None:
            self.loads.put_binary(self.wrk2_local, LOADHOST_BINARY)
        self.version = self.loads.record_versions(self.driver)
        if self.settings.scenario == "session" and self.kind.users:
            users = user_ids(self.settings.users)
            users_text = ("\n".join(users) + "\n").encode()
            self.paths.users.write_bytes(users_text)
            self.users_file = f"{self.work_dir}/users.txt"
            self.urls_file = f"{self.work_dir}/urls.txt"
            self.loads.put(self.users_file, users_text)
            self.write_urls()
        self.calibration = calibrate(self.host, NODES)

    def write_urls(self) -> None:
        """The session scenario's URLs on the load hosts: one per user, for the settings' variant and level."""
        base = target_url("lb", self.settings)
        self.loads.put(self.urls_file, "".join(f"{base}&user={u}\n" for u in user_ids(self.settings.users)).encode())

    def run_json(self) -> dict:
        chosen = backend()
        return {"schema": RUN_SCHEMA, "run_id": self.run_id, "kind": self.kind.name,
                "settings": self.settings.as_dict(),
                "driver": {"name": self.driver.name, "version": self.version,
                           "binary": str(self.wrk2_local) if self.wrk2_local else None},
                "load_hosts": self.loads.versions,
                "profile": profile_name(), "cluster_settings": cluster_settings(),
                "backend": chosen.name, "backend_version": chosen.version(),
                "targets": list(self.kind.targets),
                "harness": {"python": platform.python_version(), "host": platform.node()},
                "git_sha": git_sha(), "nodes": {node: jvm.node_info(node) for node in NODES},
                "calibration": self.calibration,
                "started_epoch": time.time()}

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
                        urls_file=None if single else self.urls_file, session_requests=s.session_requests,
                        ramp_s=min(self.RAMP_S, (duration_s or s.step_s) / 5) if phase in self.RAMPED_PHASES else 0.0)
        began = self.progress.begin(target, phase, self.step_number, rate, plan.duration_s, connections)
        step_dir = f"{self.work_dir}/step-{self.step_number:03d}"
        result, files_by_host = self.loads.send(self.driver, plan, step_dir,
                                                timeout=plan.duration_s + s.timeout_s + 120)
        for host, files in files_by_host.items():
            prefix = f"step-{self.step_number:03d}-" + (f"{host}-" if len(files_by_host) > 1 else "")
            for name in RAW_FILES:
                if files.get(name):
                    (self.paths.raw / f"{prefix}{name}").write_bytes(files[name])
        record = judge(self.run_id, self.step_number, phase, target, repeat, plan.url, "single" if single
                       else s.scenario, result, s.slo)
        record.label = self.label or target
        if closed_connections:  # no offered rate, so no SLO verdict: the step only has to be valid
            record.passed, record.slo_broken = record.valid, []
        jsonl.append(self.paths.steps, record.to_json())
        self.progress.end(record, began)
        if not settle:
            return record
        time.sleep(self.SETTLE_AFTER_PASS_S if record.passed else self.settle_after_fail_s)
        if not record.passed and target != "lb":
            self._drain()
        return record

    @property
    def settle_after_fail_s(self) -> float:
        return min(self.SETTLE_AFTER_FAIL_S, self.settings.step_s / 2)

    def _drain(self) -> None:
        deadline = time.monotonic() + self.DRAIN_MAX_S
        left = haproxy.requests_in_nodes()
        while left and time.monotonic() < deadline:
            time.sleep(0.5)
            left = haproxy.requests_in_nodes()
        if left:
            say(f"warning: {left} requests still queued or running on the nodes after {self.DRAIN_MAX_S} s")


def execute(bench: Bench, body=None) -> tuple[dict, int]:
    """Runs the kind's run() (or `body`) with monitoring around it, and always writes what was measured: steps,
    archives, run.json and summary.json; PARTIAL stays when it did not end normally. run() may return
    (status, error, exit code) for an outcome of its own (the self-check's verdict)."""
    paths, kind = bench.paths, bench.kind
    paths.partial_marker.write_text("this run has not ended normally\n")
    started = time.time()
    status, error, code = "complete", None, 0
    try:
        bench.prepare()
        jsonl.write_json(paths.run_json, bench.run_json())
        if bench.monitor is not None and kind.logs_whole_run:
            bench.start_monitoring()
        outcome = body() if body is not None else kind.run(bench)
        if outcome:
            status, error, code = outcome
    except KeyboardInterrupt:
        status, error, code = "partial", "interrupted", 130
        say("interrupted: keeping the completed steps; a generator still running on the load host was stopped")
    except (ClusterError, DriverError, OSError, subprocess.TimeoutExpired) as problem:
        status, error, code = "partial", str(problem), 1
        say(f"stopped: {problem}")
    except Exception as problem:  # a defect of ours: the summary says the run broke off, the traceback follows
        status, error, code = "partial", f"{type(problem).__name__}: {problem}", 1
        raise
    finally:
        if kind.restores_rotation:
            try:
                haproxy.set_rotation(NODES)  # documented end state: every node in rotation
            except (ClusterError, OSError) as problem:
                say(f"could not put every node back in rotation: {problem}")
        try:
            bench.finish_monitoring()
        except (ClusterError, OSError, KeyboardInterrupt) as problem:
            say(f"warning: monitoring did not finish cleanly: {problem or 'interrupted'}")
        if not paths.run_json.exists():
            jsonl.write_json(paths.run_json, bench.run_json())
        bench.collect_lb_events()
        summary = summarize(bench, status, error, started)
        jsonl.write_json(paths.summary, summary)
        if status != "partial":
            paths.partial_marker.unlink()
    return summary, code
