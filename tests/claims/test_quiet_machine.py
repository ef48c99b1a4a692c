"""Claims that need a quiet machine: `make test-claims` runs them on the Compose cluster of the integration tests
(project capbench-it), alone, with nothing else on the machine. `make test` never runs them: each compares
figures measured apart in time, or holds a generator to 1 %, within margins that a shared machine's drift (up to
35 % within minutes on ours) can break. CI keeps a robust form of each (tests/integration/; the margins are
written there). The figures of each run, with their date, go to tests/README.md.

- the gate at its default tolerance (10 %): the same build holds against a baseline of 5 repeats;
- the generator keeps 1000/s within the self-check's 1 %, from one load host and in two even shares from two,
  both starting within a second of the agreed instant;
- three nodes under capacity weights carry more than the fastest node alone (bench-cluster);
- a replicated failover (TOMCAT_SESSION_REPLICATION=1) loses at most 1 % of the answered requests' sessions;
- v3's requests wait for its pool less than v1's wait for its one monitor (bench-variants' thread dumps)."""
from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from capbench.hosts.topology import NODES
from conftest import IT_ENV, ROOT, it_up, only_run, run

ENV = {**IT_ENV, "LOADGEN": "oha", "QUICK": "1"}
pytestmark = [pytest.mark.usefixtures("cluster"), pytest.mark.docker]  # the integration tests' one cluster


def gate(results: Path, *settings: str):
    env = {**ENV, "RESULTS_DIR": str(results), "GATE_BENCH": "single", "VARIANT": "v3", "MONITOR": "off",
           "QUICK_PRECISION_PCT": "7"}
    return run([str(ROOT / "examples" / "ci" / "capacity-gate.sh"), *settings], env=env, timeout=2400, check=False)


def test_the_same_build_holds_at_the_default_tolerance(tmp_path):
    first = gate(tmp_path, "REPEATS=5")
    assert first.returncode == 4, first.stdout + first.stderr
    said = json.loads((tmp_path / "gate" / "gate.json").read_text())
    run(["make", "--no-print-directory", "baseline", "TAG=claim-v3"], env={**ENV, "RESULTS_DIR": str(tmp_path)})
    same = gate(tmp_path)
    verdict = json.loads((tmp_path / "gate" / "gate.json").read_text())
    assert same.returncode == 0, (said["checks"], verdict["checks"], same.stdout)


@pytest.mark.parametrize("hosts", ["1", "2"])
def test_the_generator_keeps_1000_per_s_within_1_pct(tmp_path, hosts):
    it_up(LOAD_HOSTS=hosts)
    try:
        done = run([sys.executable, "-m", "capbench.commands.bench", "selfcheck"],
                   env={**ENV, "LOAD_HOSTS": hosts, "RESULTS_DIR": str(tmp_path), "SELFCHECK_RATE": "1000",
                        "STEP_S": "10"}, timeout=300, check=False)
    finally:
        it_up()
    [step] = [json.loads(line) for line in (only_run(tmp_path) / "steps.jsonl").read_text().splitlines()]
    assert done.returncode == 0 and "generator keeps up" in done.stdout, done.stdout
    for share in step.get("generators") or []:
        assert share["achieved_rps"] == pytest.approx(1000 / int(hosts), rel=0.01), share
        if hosts == "2":  # one host has no instant to agree on: its skew is None
            assert 0 <= share["start_skew_ms"] < 1000, share


def test_three_nodes_carry_more_than_the_fastest_alone(tmp_path):
    run(["make", "--no-print-directory", "bench-cluster", "WEIGHTS=auto"],
        env={**ENV, "RESULTS_DIR": str(tmp_path)}, timeout=2400)
    summary = json.loads((only_run(tmp_path) / "summary.json").read_text())
    fastest = max(summary["targets"][node]["capacity_rps"] for node in NODES)
    assert summary["cluster"]["cluster_rps"] > fastest, summary["targets"]


def test_a_replicated_failover_loses_at_most_one_percent_of_sessions(tmp_path):
    run(["make", "--no-print-directory", "bench-failover"], timeout=1500,
        env={**ENV, "RESULTS_DIR": str(tmp_path), "FAILOVER_RATE": "150", "MONITOR": "off", "WORKLOAD": "session",
             "LB_STICKY": "user", "TOMCAT_SESSION_REPLICATION": "1"})
    from_fault = json.loads((only_run(tmp_path) / "summary.json").read_text())["failover"]["sessions"]["from_fault"]
    assert from_fault["moved"] > 100, from_fault  # node1's users did move
    assert from_fault["lost"] <= 0.01 * from_fault["answered"], from_fault
    assert from_fault["lost_from_node"].get("node1", 0) <= 0.05 * from_fault["moved"], from_fault


def test_v3s_requests_wait_less_than_v1s(tmp_path):
    """By Little's law the threads waiting over the requests a second are the seconds a request waits: v1 queues
    every request on its one monitor, v3 only waits for a free member of its pool. (Threads waiting alone are not
    comparable: v3 is measured at its own, higher capacity; a CI run counted 55.25 for v3 and 54 for v1, 0.069 and
    0.101 s a request.)"""
    run(["make", "--no-print-directory", "bench-variants", "VARIANTS=v1 v3", "JFR=off"],
        env={**ENV, "RESULTS_DIR": str(tmp_path)}, timeout=2400)
    variants = json.loads((only_run(tmp_path) / "summary.json").read_text())["variants"]["variants"]

    def wait_per_request(variant: str, monitor: str) -> float:
        return sum(dumps["blocked_on"].get(monitor, 0) / evidence["offered_rps"]
                   for evidence in variants[variant]["evidence"].values()
                   for dumps in evidence["thread_dumps"].values())
    v3 = wait_per_request("v3", "capbench.grinder.ReusingGrinder")
    v1 = wait_per_request("v1", "capbench.grinder.SynchronizedAllocatingGrinder")
    assert v3 < v1, (v3, v1)
    # Of the servlet's own monitors, v3's threads can only wait for one of its pool's ReusingGrinders.
    servlets = {monitor for evidence in variants["v3"]["evidence"].values()
                for dumps in evidence["thread_dumps"].values() for monitor in dumps["blocked_on"]
                if monitor.startswith("capbench.")}
    assert servlets <= {"capbench.grinder.ReusingGrinder"}, servlets
