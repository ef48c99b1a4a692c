"""Monitoring for real: `make bench-overhead QUICK=1` (node1 without monitoring, then with it) on the real
second cluster of the integration tests (project capbench-it2, on the worker the first cluster's tests leave
free: tests/conftest.py). The half with monitoring must leave PCP archives of every host whose node
metrics change during the steps; the half without must leave none; pmcd must refuse fetches from outside the
bench network."""
from __future__ import annotations

import csv
import io
import json
import subprocess
import time
from pathlib import Path

import pytest

from conftest import IT2_ENV as ENV, assert_capacity_from_the_steps, compose, only_run, run, steps_of

HOSTS = ("node1", "node2", "node3", "lb", "load", "db")
IMAGE = "capbench-controller:latest"
# What the issue lists for a node, by its PCP name.
NODE_METRICS = {
    "heap used/committed": ("openmetrics.jvm.jvm_memory_used_bytes",
                            "openmetrics.jvm.jvm_memory_committed_bytes"),
    "GC count and time per collector": ("openmetrics.jvm.jvm_gc_collection_seconds_count",
                                        "openmetrics.jvm.jvm_gc_collection_seconds_sum"),
    "live threads": ("openmetrics.jvm.jvm_threads_current",),
    "process CPU": ("openmetrics.jvm.process_cpu_seconds_total",),
    "thread pool": ("openmetrics.jvm.tomcat_threadpool_currentthreadsbusy",
                    "openmetrics.jvm.tomcat_threadpool_currentthreadcount",
                    "openmetrics.jvm.tomcat_executor_maxthreads", "openmetrics.jvm.tomcat_threadpool_connectioncount"),
    "requests": ("openmetrics.jvm.tomcat_requests_requestcount_total",
                 "openmetrics.jvm.tomcat_requests_errorcount_total",
                 "openmetrics.jvm.tomcat_requests_processingtime_total",
                 "openmetrics.jvm.tomcat_requests_bytessent_total"),
    "java process CPU, RSS, threads": ("hotproc.psinfo.utime", "hotproc.psinfo.stime", "hotproc.psinfo.rss",
                                       "hotproc.psinfo.threads"),
}
LB_METRICS = ("openmetrics.haproxy.haproxy_server_current_sessions", "openmetrics.haproxy.haproxy_server_current_queue",
              "openmetrics.haproxy.haproxy_server_http_responses_total",
              "openmetrics.haproxy.haproxy_server_retry_warnings_total",
              "openmetrics.haproxy.haproxy_server_redispatch_warnings_total",
              "openmetrics.haproxy.haproxy_server_status")
LOAD_METRICS = ("proc.psinfo.utime", "network.interface.out.bytes", "network.interface.in.bytes")
DB_METRICS = ("proc.psinfo.utime", "cgroup.cpusched.throttled", "openmetrics.postgres.db_lock_waits",
              "openmetrics.postgres.db_connections", "openmetrics.postgres.db_transactions_total")


def pcp_tool(pcp_dir: Path, command: str) -> str:
    """Runs a PCP command in the controller image over the run's archives (mounted read-only at /pcp)."""
    done = subprocess.run(["docker", "run", "--rm", "--network", "none", "-v", f"{pcp_dir}:/pcp:ro",
                           "--entrypoint", "/usr/bin/tini", IMAGE, "--", "bash", "-c", command],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, (command, done.stdout, done.stderr)
    return done.stdout


@pytest.fixture(scope="module")
def overhead_run(tmp_path_factory, second_cluster) -> Path:
    results = tmp_path_factory.mktemp("results")
    run(["make", "--no-print-directory", "bench-overhead", "QUICK=1"],
        env={**ENV, "RESULTS_DIR": str(results), "LOADGEN": "oha"}, timeout=1800)
    return only_run(results)


def test_every_host_has_an_archive_with_its_metrics(overhead_run):
    pcp = overhead_run / "pcp"
    assert sorted(p.name for p in pcp.iterdir()) == sorted(HOSTS)
    for host in HOSTS:
        assert (pcp / host / f"{host}.meta").is_file() and (pcp / host / f"{host}.0").is_file(), host
    names = {host: set(pcp_tool(pcp, f"pminfo -a /pcp/{host}").split()) for host in HOSTS}
    for what, metrics in NODE_METRICS.items():
        for node in ("node1", "node2", "node3"):
            assert set(metrics) <= names[node], (node, what, set(metrics) - names[node])
    assert set(LB_METRICS) <= names["lb"] and set(LOAD_METRICS) <= names["load"]
    assert set(DB_METRICS) <= names["db"], set(DB_METRICS) - names["db"]


def test_node_metrics_change_during_the_steps(overhead_run):
    """Over the monitored steps (counters as pmrep's per-second rates, so a rising counter has rates > 0):
    requests and GC count rise (v1 makes garbage), the java process uses CPU, the heap is in use, the pool
    has threads and the limit the settings gave."""
    steps = [s for s in steps_of(overhead_run) if "host_metrics" in s]
    assert steps, "no step was monitored"
    start, end = int(steps[0]["start_epoch"]) + 1, int(steps[-1]["end_epoch"])
    metrics = ("openmetrics.jvm.tomcat_requests_requestcount_total openmetrics.jvm.jvm_gc_collection_seconds_count "
               "hotproc.psinfo.utime openmetrics.jvm.jvm_memory_used_bytes openmetrics.jvm.tomcat_executor_maxthreads "
               "openmetrics.jvm.tomcat_threadpool_currentthreadcount")
    text = pcp_tool(overhead_run / "pcp", f"pmrep -Z UTC -a /pcp/node1 -S '@{_utc(start)}' -T '@{_utc(end)}' "
                                          f"-t 1s -o csv {metrics}")
    rows = list(csv.DictReader(io.StringIO(text)))
    assert len(rows) >= 5

    def per_row(prefix: str, instance_part: str = "") -> list[float | None]:
        """The metric's value in each row (its instances summed), None where pmrep had none yet."""
        names = [k for k in rows[0] if k.startswith(prefix) and instance_part in k]
        assert names, (prefix, list(rows[0]))
        return [sum(float(r[n]) for n in names if r[n]) if any(r[n] for n in names) else None for r in rows]

    def column(prefix: str, instance_part: str = "") -> list[float]:
        return [value for value in per_row(prefix, instance_part) if value is not None]

    requests = column("openmetrics.jvm.tomcat_requests_requestcount_total")  # requests per second
    # Summed over the window's seconds: the requests node1's Tomcat counted, at least the responses the monitored
    # steps' generator received but for the window's first second (health checks add to Tomcat's count).
    answered = sum(s["responses"] for s in steps if s["target"] == "node1")
    assert sum(requests) >= 0.9 * answered > 0, (sum(requests), answered)
    # The Grinder allocates about a megabyte per call: in the seconds node1 served 50 requests or more (50 MB of
    # garbage and up), the young generation filled and was collected in at least a third of them.
    pairs = zip(per_row("openmetrics.jvm.jvm_gc_collection_seconds_count"),  # collections per second
                per_row("openmetrics.jvm.tomcat_requests_requestcount_total"))
    busy = [gc for gc, n in pairs if gc is not None and n is not None and n >= 50]
    assert busy and sum(1 for gc in busy if gc > 0) >= len(busy) / 3, busy
    java_ms = column("hotproc.psinfo.utime", "java")                         # ms of CPU per second
    assert sum(java_ms) > 0, java_ms
    assert min(column("openmetrics.jvm.jvm_memory_used_bytes", "heap")) > 0
    assert set(column("openmetrics.jvm.tomcat_executor_maxthreads")) == {200.0}
    assert min(column("openmetrics.jvm.tomcat_threadpool_currentthreadcount")) > 0


def _utc(epoch: int) -> str:
    return time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(epoch))


def test_steps_carry_node_figures_and_tomcat_counts_agree_with_haproxy(overhead_run):
    steps = steps_of(overhead_run)
    on = [s for s in steps if "host_metrics" in s]
    assert on and len(on) < len(steps), "only the monitored half has figures"
    for step in on:
        node1 = step["host_metrics"]["node1"]
        assert node1["cpu_pct_of_quota"] > 0 and node1["heap_used_mb_mean"] > 0
        assert node1["busy_threads_mean"] is not None and node1["max_threads"] == 200
        if node1["grind_requests_per_s"] >= 20:
            # Every call of v1 at level 13 allocates its string's copies, about 1.4 MB (the servlet says
            # alloc_bytes): the young generation's allocation rate per grind request must say the same.
            per_request = node1["alloc_mb_per_s"] / node1["grind_requests_per_s"]
            assert 0.7 <= per_request <= 3.0, (step["step"], node1)
            assert node1["gc_per_s"] > 0 and node1["gc_time_pct"] > 0, (step["step"], node1)
        check = step["host_metrics"]["requests_cross_check"]["node1"]
        if check["diff_pct"] is not None:  # at least 100 responses to compare
            # Steady (passing) steps agree within 2 %; in an overloaded one Tomcat also finishes requests whose
            # client had gone (HAProxy counts no response for those): within 5 %.
            assert abs(check["diff_pct"]) <= (2 if step["passed"] else 5), (step["step"], check)


def test_overhead_is_reported_and_the_unmonitored_half_logged_nothing(overhead_run):
    summary = json.loads((overhead_run / "summary.json").read_text())
    overhead = summary["overhead"]
    steps = steps_of(overhead_run)
    for side in ("off", "on"):
            assert_capacity_from_the_steps(steps, f"node1 monitor {side}", overhead[f"capacity_{side}_rps"])
    sessions = summary["monitoring"]["sessions"]
    assert len(sessions) == 1 and all(line.startswith("started") for line in sessions[0]["hosts"])
    off_steps = [s for s in steps_of(overhead_run) if s["end_epoch"] < sessions[0]["started_epoch"]
                 or s["start_epoch"] > sessions[0]["ended_epoch"]]
    assert off_steps and not any("host_metrics" in s for s in off_steps)
    # The loggers are gone from the controller once the run ended.
    left = compose("exec", "-T", "controller", "pgrep", "-x", "pmlogger", env=ENV, check=False)
    assert left.returncode == 1, left.stdout


def test_pmcd_refuses_fetches_from_outside_the_bench_network(overhead_run):
    inside = compose("exec", "-T", "controller", "pminfo", "-h", "lb", "-f", "pmcd.version", env=ENV)
    assert "value" in inside.stdout
    # The balancer is also on the edge network; a client there is not on the bench network.
    outside = run(["docker", "run", "--rm", "--network", f"{ENV['COMPOSE_PROJECT_NAME']}_edge", "--entrypoint", "/usr/bin/tini",
                   IMAGE, "--", "pminfo", "-h", "lb", "-f", "pmcd.version"], check=False, timeout=60)
    assert outside.returncode != 0 and "value" not in outside.stdout, outside.stdout
