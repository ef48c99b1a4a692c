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

Every run writes results/<run-id>/ (results.py) as it goes; interrupted or failed runs keep their steps and
are marked partial. Exit status: 0 done, 1 failed, 2 bad settings or cluster not up, 130 interrupted.
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import re
import signal
import statistics
import sys
import time
from pathlib import Path

from load import ROOT, loadhost
from load.drivers import DriverError, StepPlan, find_wrk2
from load.drivers.oha import OhaDriver
from load.drivers.wrk2 import LOADHOST_BINARY, Wrk2Driver
from load.results import RunPaths, append_jsonl, git_sha, new_run, read_jsonl, results_dir, write_json, write_jsonl
from load.scenario import connections_for, target_url, user_ids
from load.search import find_capacity
from load.settings import BenchSettings, SettingsError, check_for_driver, load_settings, read_env_file
from load.step import StepRecord, judge
from metrics import export
from metrics.monitor import Monitor
from report import build as report_build
from report import history, usl

PROFILES = ROOT / "cluster" / "profiles"
TUNABLES = ROOT / "tomcat-conf" / "tunables.env"
TARGETS = {"single": ("node1",), "cluster": ("node1", "node2", "node3", "cluster"), "selfcheck": ("lb",),
           "overhead": ("node1",), "usl": ("node1",)}
IN_ROTATION = {"node1": ("node1",), "node2": ("node2",), "node3": ("node3",), "cluster": loadhost.NODES}
SELFCHECK_URL = "http://lb:8080/lb-health"
SELFCHECK_DEFAULT_RATE = 4000.0
SELFCHECK_TOLERANCE_PCT = 1.0
# Pause after a step before the next; after a failed one, also wait until the requests an overloaded step
# left queued in HAProxy or running on the nodes are done (up to DRAIN_MAX_S), so the next step starts clean.
SETTLE_AFTER_PASS_S = 1
SETTLE_AFTER_FAIL_S = 5
DRAIN_MAX_S = 120
STEPS_PER_SEARCH_GUESS = 10  # for the ETA until a search has finished


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
        per_target = 1 if kind == "selfcheck" else settings.repeats * (2 if kind == "overhead" else 1)
        self.progress = Progress(len(TARGETS[kind]) * per_target, settings.step_s,
                                 len(settings.usl_levels) if kind == "usl" else STEPS_PER_SEARCH_GUESS)
        self.usl_points: list[dict] = []  # make bench-usl: one per concurrency level
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
                "compose_version": loadhost.compose_version(), "targets": list(TARGETS[self.kind]),
                "harness": {"python": platform.python_version(), "host": platform.node()},
                "git_sha": git_sha(), "nodes": {node: loadhost.node_info(node) for node in loadhost.NODES},
                "started_epoch": time.time()}

    # -- steps ----------------------------------------------------------------------------------------------
    def measure(self, target: str, repeat: int, rate: float, phase: str, url: str | None = None,
                duration_s: int | None = None, closed_connections: int | None = None) -> StepRecord:
        """One step at `rate`, or with closed_connections: a closed loop of that many (rate 0)."""
        s = self.settings
        self.step_number += 1
        connections = closed_connections or connections_for(rate, s)
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
        append_jsonl(self.paths.steps, record.to_json())
        self.progress.end(record, began)
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
        # One user through first (warm-up), which also shows where HAProxy sends the traffic.
        first_user = user_ids(1)[0]
        seen = self.host.nodes_answering(f"{target_url('lb', self.settings)}&user={first_user}",
                                         max(self.settings.session_requests, 4 * len(nodes_in)))
        if set(seen) != set(nodes_in):
            raise loadhost.ClusterError(f"HAProxy should send {target}'s traffic to {', '.join(nodes_in)} "
                                        f"but these answered: {seen}")

    def search(self, target: str, label: str | None = None, repeats: int | None = None) -> None:
        """REPEATS capacity searches of the target (or `repeats`), recorded under `label` (default: the target)."""
        s = self.settings
        label = label or target
        self.route(target)
        # The routing check's requests end well before the warm-up starts: the request counts of each step
        # (metrics/export.py) run from a sample before it to one after it, and must hold only its traffic.
        time.sleep(SETTLE_AFTER_PASS_S)
        estimate = self._estimate(target)
        warm_rate = min(s.start_rate, estimate / 4) if estimate else s.start_rate
        if s.warmup_s > 0:
            self.measure(target, 0, round(warm_rate / 2, 1), "warmup", duration_s=max(s.warmup_s,
                                                                                        self.driver.min_step_s))
        done = self.searches.setdefault(label, [])
        for repeat in range(len(done) + 1, len(done) + 1 + (repeats or s.repeats)):
            previous = [x["capacity_rps"] for x in done if x["capacity_rps"]]
            guess = previous[-1] if previous else estimate
            start = max(s.start_rate, round(guess / s.growth, 1)) if guess else s.start_rate
            outcome = find_capacity(lambda rate, phase: self.measure(target, repeat, rate, phase), start,
                                    s.growth, s.precision_pct, s.max_steps)
            done.append({"repeat": repeat, "start_rps": start, **outcome.as_dict()})
            self.progress.search_done()
            capacity = f"{outcome.capacity:g}/s" if outcome.capacity else "none"
            say(f"{label} capacity {capacity} ({outcome.status}: {outcome.reason})")
            for warning in outcome.warnings:
                say(f"warning: {label}: {warning}")

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
        summary.update({
            "sum_nodes_rps": node_sum, "cluster_rps": cluster,
            "efficiency": round(cluster / node_sum, 3) if cluster and node_sum else None,
            "cluster_over_node1": round(cluster / node1, 3) if cluster and node1 else None})
    if bench.kind == "overhead":
        summary["overhead"] = overhead_ratio(targets)
    if bench.kind == "usl":
        summary["usl_points"] = [p for p in bench.usl_points if p["valid"] and p["throughput_rps"] > 0]
        summary["usl_fit"] = usl_fit(summary["usl_points"])
    if bench.monitor is not None:
        summary["monitoring"] = bench.monitor.summary()
        records = read_jsonl(bench.paths.steps)
        for label, target in targets.items():
            target["metrics_at_capacity"] = metrics_at(records, label.split()[0], target["capacity_rps"])
    summary["elapsed_s"] = round(time.time() - started, 1)
    return summary


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


def metrics_at(records: list[dict], target: str, capacity: float | None) -> dict | None:
    """The host figures of the target's last logged, passed step at the capacity found (with REPEATS, the
    median's rate may not have been measured: then None)."""
    if capacity is None:
        return None
    at = [r for r in records if r["target"] == target and r.get("passed") and r["offered_rps"] == capacity
          and "host_metrics" in r]
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
        for line in str(problem).splitlines():
            print(f"capbench: {line}", file=sys.stderr)
        return 2
    if args.check_only:
        return 0
    down = loadhost.unhealthy_services()
    if down:
        print(f"capbench: the cluster is not up ({', '.join(down)} not running and healthy): run make up first",
              file=sys.stderr)
        return 2

    run_id, paths = new_run(kind)
    paths.partial_marker.write_text("this run has not ended normally\n")
    bench = Bench(kind, settings, driver, wrk2_local, run_id, paths)
    say(f"run {run_id}: {kind} with {driver.name}, {settings.variant} level {settings.level}, "
        f"{settings.scenario} scenario, steps of {settings.step_s} s → {paths.root}")
    started = time.time()
    status, error, code = "complete", None, 0
    signal.signal(signal.SIGTERM, _interrupt)
    try:
        bench.prepare()
        write_json(paths.run_json, bench.run_json())
        if bench.monitor is not None and kind != "overhead":
            bench.start_monitoring()
        if kind == "overhead":
            bench.overhead()
        elif kind == "usl":
            bench.usl_sweep()
        elif kind == "selfcheck":
            verdict = bench.selfcheck(selfcheck_rate(settings))
            bench.searches["lb"] = [{"selfcheck": verdict, "status": "selfcheck", "capacity_rps": None}]
            code = 0 if verdict["passed"] else 1
            status = "complete" if verdict["passed"] else "failed"
            error = None if verdict["passed"] else "the generator did not keep the offered rate"
        else:
            for target in TARGETS[kind]:
                bench.search(target)
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
        summary = summarize(bench, status, error, started)
        write_json(paths.summary, summary)
        if status != "partial":
            paths.partial_marker.unlink()
    if kind == "usl":
        print_usl(summary)
    if kind != "selfcheck":
        if kind != "usl":
            print_table(summary)
        print_host_figures(summary)
        finish_report(paths, summary)
    say(f"{status}: {len(read_jsonl(paths.steps))} steps in {_mmss(summary['elapsed_s'])} → {paths.root}")
    return code


if __name__ == "__main__":
    sys.exit(main())
