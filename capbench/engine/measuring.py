"""A run's steps: each one sent to the load hosts at a rate (or as a closed loop), its raw files kept, judged
against the SLO and recorded under a label, then the pause before the next. The scenario's dataset (users, URLs,
SCENARIO_FILE's requests) goes to the load hosts first. Part of the Bench (capbench/engine/runner.py)."""
from __future__ import annotations

import math
import re
import threading
import time
from dataclasses import dataclass, replace

from capbench.engine.progress import Progress, say
from capbench.engine.step import judge
from capbench.hosts import haproxy
from capbench.hosts.balancer_address import BALANCER_PORT, base_url, passed_through, tls
from capbench.load import client_leg
from capbench.load.drivers import StepPlan
from capbench.load.drivers.wrk2 import scenario_table
from capbench.load.load_hosts import LoadHosts
from capbench.load.scenario import connections_for, target_url, user_ids
from capbench.rundata import hlog, jsonl
from capbench.rundata.layout import RunPaths
from capbench.rundata.records import SEARCH_PHASES, StepRecord
from capbench.settings.bench import MAX_CONNECTIONS, BenchSettings

RAW_FILES = ("oha.json", "wrk2.json", "stdout", "stderr", "envelope")  # kept per step (not oha's request database)


@dataclass(frozen=True)
class Route:
    """Where a step's requests go and what they ask for, when not the balancer's port with the run's settings: a
    duet's slot, a node's own port (capbench/hosts/topology.node_port) asked for a build's settings (its VARIANT). Its
    URLs file is written by StepRunner.route_for."""
    port: int
    settings: BenchSettings
    urls_file: str | None


class StepRunner:
    # Pause after a step before the next; after a failed one, also wait until the requests an overloaded step
    # left queued in HAProxy or running on the nodes are done (up to DRAIN_MAX_S), so the next step starts clean.
    # The pause after a failure lets the garbage and the work an overload left behind settle; a step shorter than
    # 10 s (QUICK's 5 s) left at most half a step's worth of it, so it waits half a step.
    # A search step's first seconds (at most a fifth of it) are its ramp, recorded apart from its verdict: oha
    # opens its connections, HAProxy its own to the nodes, Tomcat grows its pool, and those first seconds' p99
    # is many times the rest's, enough to decide the step's. wrk2 leaves out its first 10 s the same way (its
    # calibration).
    RAMP_S = 2.0
    RAMPED_PHASES = ("warmup", *SEARCH_PHASES, "unprofiled", "profiled", "selfcheck", "gate", "ceiling")
    SETTLE_AFTER_PASS_S = 1
    SETTLE_AFTER_FAIL_S = 5
    DRAIN_MAX_S = 120

    def __init__(self, settings: BenchSettings, driver, loads: LoadHosts, run_id: str, work_dir: str,
                 paths: RunPaths, progress: Progress):
        self.settings = settings  # change_settings() switches it between searches (bench-variants, bench-sessions)
        self.driver = driver
        self.loads = loads
        self.run_id = run_id
        self.work_dir = work_dir
        self.paths = paths
        self.progress = progress
        self.step_number = 0
        self.users_file: str | None = None
        self.urls_file: str | None = None
        self.requests_file: str | None = None  # SCENARIO_FILE's requests for wrk2's capbench.lua
        self.body_file: str | None = None  # and the body every request sends, for oha
        self.warmups: list[dict] = []  # each warm-up's windows and whether it became steady (capbench/engine/warmup.py)
        self._numbering = threading.Lock()  # a duet measures two steps at once (capbench/duet/builds.py)
        self._routes: dict[tuple[int, str, int], Route] = {}  # route_for's, by port, variant and work
        # What the balancer speaks to the nodes as this run's cluster runs (make tune's point may change it).
        self.node_http = "1.1"

    def put_dataset(self) -> None:
        """The scenario's dataset on each load host: the session scenario's users (a copy in the results), and
        its URLs or SCENARIO_FILE's requests."""
        if self.settings.scenario == "session":
            users_text = ("\n".join(user_ids(self.settings.users)) + "\n").encode()
            self.paths.users.write_bytes(users_text)
            self.users_file = f"{self.work_dir}/users.txt"
            self.loads.put(self.users_file, users_text)
        self.urls_file = f"{self.work_dir}/urls.txt"
        if self.settings.user_scenario is not None:
            self.put_requests()
        else:
            self.write_urls()

    def put_requests(self) -> None:
        """SCENARIO_FILE's requests as each tool reads them: for oha each URL `weight` times (its random pick of
        a line honours the weights) and the one body every request sends; for wrk2 the whole scenario."""
        scenario = self.settings.user_scenario
        self.loads.put(self.urls_file, scenario.weighted_urls("lb", BALANCER_PORT).encode())
        self.requests_file = f"{self.work_dir}/requests.lua"
        self.loads.put(self.requests_file, scenario_table(scenario))
        body = scenario.requests[0].body
        if body is not None and scenario.mixed() is None:
            self.body_file = f"{self.work_dir}/body"
            self.loads.put(self.body_file, body)

    def write_urls(self) -> None:
        """The session scenario's URLs on the load hosts: one per user, for the settings' variant and level."""
        self._put_urls(self.urls_file, self.settings, BALANCER_PORT)

    def _put_urls(self, path: str, settings: BenchSettings, port: int) -> None:
        if settings.user_scenario is not None:
            text = settings.user_scenario.weighted_urls("lb", port)
        else:
            base = target_url("lb", settings, port)
            text = "".join(f"{base}&user={u}\n" for u in user_ids(settings.users))
        self.loads.put(path, text.encode())

    def route_for(self, port: int, settings: BenchSettings) -> Route:
        """A route to a node's own port asking for `settings`, its URLs on the load hosts (once) when the
        scenario draws them from a file."""
        key = (port, settings.variant, settings.work_pct)
        if key not in self._routes or self._routes[key].settings != settings:
            urls_file = None
            if self.urls_file is not None:
                urls_file = f"{self.work_dir}/urls-{port}-{settings.variant}-{settings.work_pct}.txt"
                self._put_urls(urls_file, settings, port)
            self._routes[key] = Route(port, settings, urls_file)
        return self._routes[key]

    def change_settings(self, settings: BenchSettings) -> None:
        """The steps from now on ask for what `settings` say (the URLs on the load hosts written anew)."""
        self.settings = settings
        if self.urls_file and settings.user_scenario is None:
            self.write_urls()

    def measure(self, target: str, repeat: int, rate: float, phase: str, *, label: str | None = None,
                url: str | None = None, duration_s: int | None = None, closed_connections: int | None = None,
                settle: bool = True, stuck_s: float = 0, route: Route | None = None,
                start_at: float | None = None, node_cpus: dict[str, float] | None = None,
                driver=None) -> StepRecord:
        """One step at `rate`, or with closed_connections: a closed loop of that many (rate 0), recorded under
        `label` (default: the target). settle=False: the next step follows at once, on what this one left queued
        (bench-stress's overload and recovery). stuck_s: the generator gets rate × stuck_s connections more, for
        requests a fault will hold that long (a frozen node's): its users are independent, so theirs must not
        wait for a free connection. route: to a node's own port with a build's settings (a duet's slot);
        start_at: the instant (epoch s) the generators start, shared with a step measured beside this one;
        node_cpus: nodes' quotas other than the profile's (a duet's twins), recorded for their CPU share;
        driver: another generator than the run's (a duet's short closed-loop windows, which wrk2 cannot run)."""
        s = route.settings if route is not None else self.settings
        with self._numbering:
            self.step_number += 1
            number = self.step_number
        connections = closed_connections or min(MAX_CONNECTIONS, connections_for(rate, s) + math.ceil(rate * stuck_s))
        single = url is not None or s.scenario == "single"
        scenario = s.user_scenario if url is None else None
        port = route.port if route is not None else BALANCER_PORT
        urls_file = route.urls_file if route is not None else self.urls_file
        plan = StepPlan(url=url or target_url("lb", s, port), rate=rate, duration_s=duration_s or s.step_s,
                        connections=connections, threads=s.threads, timeout_s=s.timeout_s,
                        users_file=None if single else self.users_file,
                        urls_file=None if single and scenario is None else urls_file,
                        session_requests=s.session_requests, http=s.http,
                        connection_life=s.connection_life,
                        ramp_s=min(self.RAMP_S, (duration_s or s.step_s) / 5) if phase in self.RAMPED_PHASES else 0.0)
        if scenario is not None:
            first = scenario.requests[0]
            # A user's cookies last the whole search (label and repeat), as a returning visitor's do.
            jar = f"{self.work_dir}/cookies-{re.sub(r'[^A-Za-z0-9]+', '_', label or target)}-{repeat}"
            plan = replace(plan, url=scenario.url(first, "lb", port), requests_file=self.requests_file,
                           success=scenario.success, method=first.method, headers=first.headers,
                           body_file=self.body_file, cookie_jar=jar)
        began = self.progress.begin(target, phase, number, rate, plan.duration_s, connections)
        step_dir = f"{self.work_dir}/step-{number:03d}"
        # The balancer's counts of the client's leg (protocol, connections, handshakes), for a step alone on it.
        counted = (route is None and start_at is None and plan.url.startswith(base_url("lb") + "/")
                   and client_leg.wanted(tls(), s.http, s.connection_life, self.node_http))
        counters_before = client_leg.read() if counted else None
        sent = self.loads.send(driver or self.driver, plan, step_dir, timeout=plan.duration_s + s.timeout_s + 120,
                               start_at=start_at)
        result = sent.result
        counters_after = client_leg.read() if counted else None
        for host, files in sent.files.items():
            for name in RAW_FILES:
                if files.get(name):
                    self.paths.raw_step_file(number, name, host if len(sent.files) > 1 else None).write_bytes(files[name])
        self._keep_histograms(number, sent)
        record = judge(self.run_id, number, phase, target, repeat, plan.url, "single" if single
                       else s.scenario, result, s.slo)
        record.label = label or target
        record.scenario_file = scenario.name if scenario is not None else ""
        record.node_cpus = node_cpus
        if counters_before is not None and counters_after is not None:
            record.client_leg = client_leg.figures(counters_before, counters_after,
                                                   result.end_epoch - result.start_epoch, plan.url.startswith("https:"),
                                                   result.responses, passed_through())
        if closed_connections:  # no offered rate, so no SLO verdict: the step only has to be valid
            record.passed, record.slo_broken = record.valid, []
        with self._numbering:
            jsonl.append(self.paths.steps, record.to_json())
        self.progress.end(record, began)
        if not settle:
            return record
        time.sleep(self.SETTLE_AFTER_PASS_S if record.passed else self.settle_after_fail_s)
        if not record.passed and target != "lb":
            self._drain()
        return record

    def _keep_histograms(self, number: int, sent) -> None:
        """The step's latency histograms as interval logs: the step's (what its figures come from) and, with
        several load hosts, each host's."""
        start = sent.result.start_epoch
        books = {None: sent.book, **(sent.books if len(sent.files) > 1 else {})}
        for host, book in books.items():
            if book is not None:
                hlog.write(self.paths.hlog(number, host), start, book.intervals(),
                           f"capbench step {number} of run {self.run_id}" + (f", load host {host}" if host else ""))

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
