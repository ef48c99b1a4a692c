"""Faults and overload for real. On the second cluster (capbench-it2, on the other worker): bench-failover kills
node1 under load and brings it back, its users' sessions stuck to it lost (WORKLOAD=session, LB_STICKY=user);
FAULT=delay run or refused where the kernel has no netem; bench-stress overloads the cluster and watches it
recover. On the first cluster (the Compose worker), faults that leave its settings as they were: the freeze,
without stickiness, where users lose sessions at every move, and a partition. (A node's machine lost during a bench, which ends the run degraded, is test_swarm.py's, on
the lab where a machine can be lost.) Figures are what our machine gives; the tests check that they were measured
and said, and the goals that hold by construction of the balancer (no failure accepted after detection). Sessions
kept by replication across a kill are checked functionally in test_sessions.py; how few a replicated failover loses
is a claim for a quiet machine (tests/claims/)."""
from __future__ import annotations

import gzip
import json
import subprocess
from pathlib import Path

import pytest

from capbench.analysis import session_loss
from capbench.hosts import haproxy_log
from conftest import IT_ENV, compose, only_run, run, steps_of

SETTINGS = {"QUICK": "1", "LOADGEN": "oha"}
# Every test here runs on the second cluster (tests/conftest.py), on the other worker: the first cluster's worker
# holds the gate's duets and ended last in CI (of 56da0a0 at 40 minutes, 3 after the other; the kill during a
# bench moved over after CI of d430d25, its Compose worker's tests over 20 s 36.6 minutes against 37.8).


@pytest.fixture
def second(second_cluster) -> dict[str, str]:
    return {**second_cluster, **SETTINGS}


@pytest.fixture
def first(cluster) -> dict[str, str]:
    """The first cluster (the Compose worker's), for the faults that leave its settings as they were: the
    other worker's tests summed 41 minutes in the fresh-clone CI of ff55357, the Compose worker's 30."""
    return {**IT_ENV, **SETTINGS}


def bench(kind: str, results: Path, cluster_env: dict[str, str],
          **env: str) -> tuple[subprocess.CompletedProcess, Path, dict]:
    done = run(["make", "--no-print-directory", f"bench-{kind}"],
               env={**cluster_env, "RESULTS_DIR": str(results), **env}, timeout=1500)
    run_dir = only_run(results)
    return done, run_dir, json.loads((run_dir / "summary.json").read_text())


def non_200_log_lines(run_dir: Path) -> list[str]:
    """HAProxy's request log lines of the run whose status is not 200 (capbench/hosts/haproxy_log.py's format)."""
    with gzip.open(run_dir / "raw" / "lb-requests.log.gz", "rt") as log:
        return [line.strip() for line in log if "capbench-req" in line and " 200 " not in line][:20]


def lost_before_the_fault(run_dir: Path, result: dict) -> tuple[float, list[haproxy_log.Request]]:
    """The fault's time, and the failover step's requests received before it that found no session their user had
    had (from HAProxy's log of the run)."""
    [record] = [r for r in steps_of(run_dir) if r["step"] == result["step"]]
    start, fault = record["start_epoch"], record["start_epoch"] + result["fault_s"]
    with gzip.open(run_dir / "raw" / "lb-requests.log.gz", "rt") as log:
        requests = haproxy_log.parse_requests(log.read())
    return fault, session_loss.lost_between(requests, start, fault)


def lb_requests_logging(cluster_env: dict[str, str]) -> str:
    return compose("exec", "-T", "lb", "sh", "-c", "echo $LB_LOG_REQUESTS", env=cluster_env).stdout.strip()


def test_failover_kill_is_detected_and_the_node_comes_back(second, tmp_path):
    # Users with sessions, stuck to their node: only the killed node's users lose theirs.
    # node1 is killed 15 s in and started 10 s later; its JVM took 17 s to pass HAProxy's checks beside the other
    # worker's benches, and 32 s in CI on a slow hour (2026-11-27: UP 8 s before the end of an 80-s step with
    # the fault at 20 s for 20 s, and no request reached it in those 8): the 80-s step leaves it 55 s.
    done, run_dir, summary = bench("failover", tmp_path, second, FAILOVER_RATE="150", MONITOR="off", WORKLOAD="session",
                                   LB_STICKY="user", QUICK_FAILOVER_S="80", FAULT_AT_S="15", FAULT_FOR_S="10")
    result = summary["failover"]
    assert summary["status"] == "complete"
    assert result["fault"] == "kill" and result["node"] == "node1"
    assert result["fault_time"]["source"] == "Docker's kill event"
    assert 0 < result["detection_s"] < 10, result
    assert result["time_to_up_s"] is not None and result["time_to_traffic_s"] is not None, result
    # HAProxy sends nothing to node1 once it holds it down, and retries a failed connect elsewhere: no request
    # accepted after detection fails. (The generator's read errors of every kill run are something else:
    # requests in flight on node1 when it died, which HAProxy closes unanswered and unlogged;
    # capbench/kinds/failover.py counts them.) A few HTTP 400s logged after detection in one CI run long ago were
    # never seen again: 11 kill runs (107 000 requests) with the wire between HAProxy and the nodes captured
    # showed none. Should one come back, the assertion shows HAProxy's log lines to explain it by.
    assert result["failed_after_detection_by_kind"] == {}, (result["failed_after_detection_by_kind"],
                                                           non_200_log_lines(run_dir))
    assert result["requests"] > 0.8 * 150 * 60
    assert [e["state"] for e in summary["lb_events"] if e["node"] == "node1"][:2] == ["DOWN", "UP"]
    assert "failover: kill node1: detected in" in done.stdout
    step, from_fault = result["sessions"]["step"], result["sessions"]["from_fault"]
    # None before the fault, every user staying put, but for a request whose connect to node1 was already refused
    # (HAProxy redispatched it) in the moment before Docker reported the kill: the event trails the SIGKILL (by 23 ms
    # in one CI run).
    fault, early = lost_before_the_fault(run_dir, result)
    assert len(early) == step["lost"] - from_fault["lost"], (early, result["sessions"])
    assert all(r.redispatched and fault - 1 < r.received < fault for r in early), early
    # node1's users lose theirs; the other nodes' users, stuck to a node that stayed up, keep theirs. (Nearly all
    # losses are from node1: in one CI run 558 of 559, the other a user moved to node3 and back once node1 returned.)
    assert 0 < from_fault["users_lost"] < from_fault["users"], from_fault
    assert from_fault["lost"] > 0 and from_fault["lost_from_node"].get("node1", 0) >= 0.9 * from_fault["lost"], from_fault
    assert "sessions from the fault on:" in done.stdout
    assert (run_dir / "failover.json").exists() and (run_dir / "raw" / "lb-requests.log.gz").exists()
    html = (run_dir / "report.html").read_text()
    assert "Failover: kill node1" in html and "failover.png" in html
    # The balancer is back without its request log, every node up and in rotation.
    assert lb_requests_logging(second) == "0"
    assert "node1" in compose("ps", "--status", "running", "--services", env=second).stdout.split()


def test_failover_freeze_is_detected_and_thawed(first, tmp_path):
    # Users with sessions and no stickiness: the round robin moves them, and they lose their sessions fault or not.
    # A thawed JVM answers at once (nothing to start), so a 35-s step with 10 s frozen from 10 s in leaves it 15 s
    # to pass HAProxy's checks again (detection and return take a few seconds each).
    _, _, summary = bench("failover", tmp_path, first, FAULT="freeze", FAULT_NODE="node2", FAILOVER_RATE="150",
                          MONITOR="off", WORKLOAD="session", QUICK_FAILOVER_S="35", FAULT_AT_S="10", FAULT_FOR_S="10")
    result = summary["failover"]
    assert summary["status"] == "complete" and result["fault"] == "freeze" and result["node"] == "node2"
    assert result["fault_time"]["source"] == "Docker's pause event"
    assert 0 < result["detection_s"] < 10, result
    assert result["time_to_up_s"] is not None, result
    # A frozen node fails what it held at the fault and what HAProxy sent it before noticing; nothing sent
    # after HAProxy marked it down fails.
    assert result["failed"] <= result["in_flight_at_fault"] + result["sent_to_node_before_detection"], result
    assert "after detection" not in result["failed_by_when"], result
    assert compose("ps", "--format", "{{.Service}} {{.State}}", env=first).stdout.count("paused") == 0
    sessions = result["sessions"]
    assert sessions["step"]["lost"] > sessions["from_fault"]["lost"] > 0, sessions


def test_failover_partition_cuts_a_node_from_the_bench_network_in_its_own_namespace(first, tmp_path):
    # nft in node3's own network namespace: HAProxy sees silence, not a refusal; what it sent node3 before
    # noticing waits for the reconnection (the node's answers are only dropped, then retransmitted). The same
    # script runs on Swarm through the node's machine's engine (measured on the lab: docs/findings.md).
    _, run_dir, summary = bench("failover", tmp_path, first, FAULT="partition", FAULT_NODE="node3",
                                FAILOVER_RATE="150", MONITOR="off", QUICK_FAILOVER_S="30", FAULT_AT_S="8",
                                FAULT_FOR_S="8")
    result = summary["failover"]
    assert summary["status"] == "complete" and result["fault"] == "partition", result
    assert result["fault_time"]["source"].startswith("the clock of the node's machine"), result
    assert 0 < result["detection_s"] <= 2, result
    assert "after detection" not in result["failed_by_when"], result
    assert result["redispatched"] > 0, result  # connects to the silent node timed out and went elsewhere
    assert result["time_to_up_s"] is not None and result["time_to_traffic_s"] is not None, result
    assert "reconnection" in (run_dir / "report.html").read_text()
    # Nothing of the partition is left: node3 answers on the bench network, through its own port on the balancer.
    answer = compose("exec", "-T", "load", "curl", "-fsS", "--max-time", "10", "http://lb:8103/health", env=first)
    assert answer.stdout.strip() == "ok", answer.stdout


def test_failover_delay_runs_where_the_kernel_has_netem_and_is_refused_in_one_line_where_not(second, tmp_path):
    # Our machines' kernels have no netem (CONFIG_NET_SCH_NETEM unset): refused after the cluster's bring-up,
    # before the run. Where a kernel has it, the delayed node's answers are the delay slower.
    done = run(["make", "--no-print-directory", "bench-failover"], check=False, timeout=600,
               env={**second, "RESULTS_DIR": str(tmp_path), "FAULT": "delay", "FAULT_DELAY_MS": "200",
                    "FAULT_LOSS_PCT": "0", "FAILOVER_RATE": "90", "MONITOR": "off", "QUICK_FAILOVER_S": "30",
                    "FAULT_AT_S": "8", "FAULT_FOR_S": "10"})
    if "no netem queueing discipline" in done.stderr:
        assert done.returncode == 2, done.stderr
        [line] = [line for line in done.stderr.splitlines() if line.startswith("capbench: ")]
        assert line.startswith("capbench: FAULT='delay' cannot run on node1's machine (this machine)"), line
        assert not tmp_path.exists() or not any(tmp_path.iterdir()), "a refused bench made a run"
        return
    assert done.returncode == 0, done.stderr
    result = json.loads((only_run(tmp_path) / "summary.json").read_text())["failover"]
    p99 = result["node_p99_ms"]
    assert p99["during"] >= 200 > p99["before"], result


def test_stress_overloads_and_the_run_says_how_it_recovered(second, tmp_path):
    done, run_dir, summary = bench("stress", tmp_path, second, STRESS_CAPACITY="300", STRESS_OVER_S="20",
                                   MONITOR="off")
    result = summary["stress"]
    assert summary["status"] == "complete"
    assert result["rates_rps"] == {"before": 150.0, "overload": 600.0, "recovery": 150.0}
    assert [r["phase"] for r in map(json.loads, (run_dir / "steps.jsonl").read_text().splitlines())] == \
        ["warmup", "before", "overload", "recovery"]  # a warm-up, as no search ran (STRESS_CAPACITY given)
    assert 0 < result["overload_answered_mean_rps"] <= 1.1 * 600, result  # never more than was offered
    assert set(result["failed_by_phase"]) == {"before", "overload", "recovery"}
    # Back to 150/s, half the capacity given: healthy again (5 s in a row) within the 40 s recovery step.
    recover_s = result["time_to_recover_s"]
    assert recover_s is not None and 0 <= recover_s <= 40 - 5, result
    assert "stress: overload at 600/s" in done.stdout and f"recovered {recover_s:g} s after the load fell" in done.stdout
    assert "Overload: cluster at 600.0/s" in (run_dir / "report.html").read_text()
    assert lb_requests_logging(second) == "0"
