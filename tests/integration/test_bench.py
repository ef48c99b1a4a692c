"""The capacity benches for real: `make bench-cluster QUICK=1 WEIGHTS=auto` on the real cluster (project
capbench-it, so a cluster of yours is untouched) with the packaged driver; an interrupted bench keeps its steps
and says it is partial; and, when a wrk2 binary is given (WRK2=…), bench-single with wrk2. bench-usl and
bench-variants run on a second cluster (test_variants.py), bench-scaleout on the Swarm lab (test_swarm.py), make
tune's interruption on the pool sweep (test_database.py), the generator's self-check from two load hosts
(test_load_hosts.py). Whether the cluster carries more than its fastest node is a claim for a quiet machine
(tests/claims/): here each capacity is checked against its own steps."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import pytest

from capbench.hosts import runlock
from capbench.hosts.topology import NODES
from conftest import (
    IT_ENV as ENV,
    NO_WRK2,
    ROOT,
    assert_capacity_from_the_steps,
    compose,
    only_run,
    run,
    sigint_as_default,
    steps_of,
)

pytestmark = pytest.mark.usefixtures("cluster")  # the session's one cluster (tests/conftest.py)
CHOICES = ("equal", "weighted", "leastconn")  # WEIGHTS=auto's balancings
TARGETS = (*NODES, *(f"cluster {choice}" for choice in CHOICES))
STEP_FIELDS = ("run_id", "step", "phase", "target", "url", "offered_rps", "duration_s", "connections",
               "achieved_rps", "responses", "latency_ms", "errors", "start_epoch", "end_epoch", "tool",
               "valid", "passed", "failures", "failure_pct", "loadhost")


def assert_step_complete(step: dict) -> None:
    for field in STEP_FIELDS:
        assert step.get(field) is not None, (field, step)
    assert set(step["errors"]) == {"connect", "read", "write", "timeout", "status", "slow", "other"}
    if step["responses"]:
        assert set(step["latency_ms"]) == {"p50", "p90", "p99", "p99.9", "max"}
    assert step["start_epoch"] < step["end_epoch"]
    assert step["tool"]["name"] and step["tool"]["version"] and step["tool"]["argv"]


def test_quick_bench_cluster_with_auto_weights(tmp_path):
    done = run(["make", "--no-print-directory", "bench-cluster", "QUICK=1", "WEIGHTS=auto"],
               env={**ENV, "RESULTS_DIR": str(tmp_path), "LOADGEN": "oha"}, timeout=1800)
    run_dir = only_run(tmp_path)
    summary = json.loads((run_dir / "summary.json").read_text())
    steps = steps_of(run_dir)
    assert summary["status"] == "complete" and not (run_dir / "PARTIAL").exists()
    assert summary["driver"]["name"] == "oha" and summary["driver"]["version"] == "oha 1.16.0"
    # The machine's calibration, in the summary and run.json alike: every node's servlet time per probe call
    # (a level-13 grind takes tenths of a millisecond to a few ms on our machines), the load probe's time.
    calibration = summary["calibration"]
    assert calibration == json.loads((run_dir / "run.json").read_text())["calibration"]
    assert all(0.05 < ms < 20 for ms in calibration["ms_per_call"].values()), calibration
    assert set(calibration["ms_per_call"]) == set(NODES) and calibration["load_ms"] > 0
    # and every node's native CPU probe (what tells machines apart), a CPU time per run of tens of ms
    assert set(calibration["node_cpu_ms"]) == set(NODES), calibration
    assert all(5 < ms < 2000 for ms in calibration["node_cpu_ms"].values()), calibration
    for step in steps:
        assert_step_complete(step)
        assert step["unanswered"] is not None and step["behind_schedule"] is not None  # oha accounts for both
    for target in TARGETS:
        assert_capacity_from_the_steps(steps, target, summary["targets"][target]["capacity_rps"])
    # WEIGHTS=auto: the cluster under each balancing, with its E; weights follow the node capacities; the
    # cluster's capacity is the one under those weights.
    balancing = summary["cluster"]["balancing"]
    assert list(balancing) == list(CHOICES)
    for choice in CHOICES:
        b = balancing[choice]
        assert b["capacity_rps"] == summary["targets"][f"cluster {choice}"]["capacity_rps"]
        assert f"balancing {choice}" in done.stdout
        if b["efficiency"] is None:  # a figure touched the testbed's ceiling (a busy machine): said so, no E
            assert "this machine's ceiling, not the application's" in b["efficiency_caveat"], b
            assert f"note: {b['efficiency_caveat']}" in done.stdout
        else:
            assert f"E {b['efficiency']:.3f}" in done.stdout
    assert balancing["equal"]["weights"] == balancing["leastconn"]["weights"] == {n: 1 for n in NODES}
    assert (balancing["equal"]["balance"], balancing["leastconn"]["balance"]) == ("roundrobin", "leastconn")
    fastest = max(NODES, key=lambda n: summary["targets"][n]["capacity_rps"])
    assert balancing["weighted"]["weights"][fastest] == 100
    assert summary["cluster"]["cluster_rps"] == balancing["weighted"]["capacity_rps"]
    if summary["cluster"]["efficiency"] is None:
        assert "this machine's ceiling" in summary["cluster"]["not_measured"]["efficiency"], summary["cluster"]
    else:
        assert f"E = X_cluster / ΣX_i = {summary['cluster']['efficiency']:.3f}" in done.stdout
    # The balancer is back to the profile's: roundrobin (re-created after leastconn), weights 5:4:3.
    rows = [line.split() for line in node_states().splitlines()[2:] if line.strip()]
    assert {row[3]: row[7] for row in rows} == {"node1": "5", "node2": "4", "node3": "3"}  # srv_uweight
    algorithm = compose("exec", "-T", "lb", "sh", "-c", "echo $LB_BALANCE", env=ENV).stdout.strip()
    assert algorithm == "roundrobin"
    run_json = json.loads((run_dir / "run.json").read_text())
    assert run_json["settings"]["quick"] and run_json["driver"]["version"] == "oha 1.16.0"
    # A smoke run (QUICK's 15-s holds), said above the table.
    assert summary["smoke"] and "SMOKE RUN" in done.stdout
    # The testbed's ceiling: the direct check (made once per machine and settings, then kept) in run.json, the
    # ceiling in the summary and under the table (priced by the direct check: the Grinder's rates stay far below
    # it). The Grinder saturates its nodes long before the generator and HAProxy fill the cores they leave: no
    # figure is the testbed's.
    check = run_json["testbed_ceiling"]
    assert check["carried_rps"] > 0 and check["harness_ms_per_request"] > 0 and check["steps"], check
    ceiling = summary["testbed_ceiling"]
    assert ceiling["ceiling_rps"] > 0 and ceiling["direct_check"]["key"] == check["key"], ceiling
    assert f"testbed ceiling: {ceiling['sentence']}" in done.stdout
    # Compose: every host under this machine's kernel, so its cores are the ones counted.
    assert [(m["name"], m["cpus"]) for m in check["machines"]] == [("this machine", os.cpu_count())], check
    assert ceiling["machine"] == "this machine" and len(ceiling["machines"]) == 1, ceiling
    assert not [label for label, t in summary["targets"].items() if t.get("testbed_bound")], summary["targets"]
    assert run_json["git_sha"]
    # Monitored (MONITOR=on by default): every host archived, every step has its hosts' figures, and at each
    # capacity the nodes that served it show CPU used.
    assert sorted(p.name for p in (run_dir / "pcp").iterdir()) == ["db", "lb", "load", "node1", "node2", "node3"]
    assert all("host_metrics" in step for step in steps)
    # Every node's archive has values during every step: heap, GC, thread pool, requests, the java process CPU.
    for step in steps:
        for node in NODES:
            figures = step["host_metrics"][node]
            for key in ("cpu_pct_of_quota", "heap_used_mb_mean", "gc_per_s", "busy_threads_mean", "requests_per_s"):
                assert figures[key] is not None, (step["step"], node, key)
    for target in TARGETS:
        at_capacity = summary["targets"][target]["metrics_at_capacity"]
        served = NODES if target.startswith("cluster") else (target,)
        assert all(at_capacity[node]["cpu_pct_of_quota"] > 0 for node in served), at_capacity
    # The run ends in its report (every figure made) and one line of the capacity history.
    assert f"capbench: report: {run_dir / 'report.html'}" in done.stdout
    assert {p.name for p in (run_dir / "figures").iterdir()} >= {
        "capacity-node1.png", "capacity-cluster-weighted.png", "single-vs-cluster.png", "load-balance.png",
        "latency-spectrum.png", "balancing.png"}
    assert all(step["latency_spectrum_ms"][-1] == [100, step["latency_ms"]["max"]] for step in steps)
    assert run_json["nodes"]["node1"]["gc"] and run_json["nodes"]["node3"]["heap_max_bytes"] > 0
    [line] = [json.loads(text) for text in (tmp_path / "history.jsonl").read_text().splitlines()]
    assert line["run_id"] == run_dir.name and line["capacities"]["cluster weighted"] == summary["cluster"]["cluster_rps"]
    assert line["efficiency"] == summary["cluster"]["efficiency"] and line["config_hash"]


def node_states() -> str:
    return run([str(ROOT / "cluster" / "lb-api.sh"), "show servers state nodes"], env=ENV).stdout


def test_interrupted_bench_keeps_its_steps_and_is_marked_partial(tmp_path):
    env = {**os.environ, **ENV, "RESULTS_DIR": str(tmp_path), "QUICK": "1", "LOADGEN": "oha", "MONITOR": "off"}
    bench = subprocess.Popen([sys.executable, "-m", "capbench.commands.bench", "single"], cwd=ROOT, env=env,
                             stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                             preexec_fn=sigint_as_default)
    deadline = time.monotonic() + 180
    while True:
        runs = [p for p in tmp_path.iterdir() if (p / "steps.jsonl").exists()]
        written = len(steps_of(runs[0])) if runs else 0
        if written >= 2:
            break
        assert bench.poll() is None and time.monotonic() < deadline, \
            f"waited 180 s for the bench's second step; it wrote {written} and " \
            f"{'ended' if bench.poll() is not None else 'is still running'}"
        time.sleep(0.5)
    # A second bench on the same cluster while this one runs is refused before it starts anything.
    second = subprocess.run([sys.executable, "-m", "capbench.commands.bench", "cluster"], cwd=ROOT, env=env,
                            capture_output=True, text=True, timeout=60)
    assert second.returncode == 2, second.stdout + second.stderr
    assert "another bench is running on this cluster (compose-capbench-it): make bench-single, pid " \
        f"{bench.pid}" in second.stderr
    assert len([p for p in tmp_path.iterdir() if p.is_dir()]) == 1
    bench.send_signal(signal.SIGINT)
    output, _ = bench.communicate(timeout=120)
    assert bench.returncode == 130, output
    run_dir = only_run(tmp_path)
    # The lock went with the process: the next bench may start.
    runlock.acquire("the test", "compose-capbench-it").close()
    assert (run_dir / "PARTIAL").exists()
    summary = json.loads((run_dir / "summary.json").read_text())
    assert summary["status"] == "partial" and summary["error"] == "interrupted"
    assert len(steps_of(run_dir)) >= 2
    assert "interrupted: keeping the completed steps" in output
    # The step's generator was stopped on the load host too.
    running = compose("exec", "-T", "load", "sh", "-c", "cat /proc/[0-9]*/comm", env=ENV).stdout.split()
    assert "oha" not in running
    # The documented end state: every node back in rotation (admin state bit 1 clear).
    rows = [line.split() for line in node_states().splitlines()[2:] if line.strip()]
    assert {row[3] for row in rows} == {"node1", "node2", "node3"}
    assert all(int(row[6]) % 2 == 0 for row in rows)


@NO_WRK2
def test_quick_bench_single_with_wrk2(tmp_path):
    run(["make", "--no-print-directory", "bench-single", "QUICK=1", "LOADGEN=wrk2"],
        env={**ENV, "RESULTS_DIR": str(tmp_path)}, timeout=1800)
    run_dir = only_run(tmp_path)
    summary = json.loads((run_dir / "summary.json").read_text())
    assert summary["status"] == "complete" and summary["driver"]["name"] == "wrk2"
    assert_capacity_from_the_steps(steps_of(run_dir), "node1", summary["targets"]["node1"]["capacity_rps"])
    for step in steps_of(run_dir):
        assert_step_complete(step)
        assert step["duration_s"] >= 20  # past wrk2's calibration
        # Our done() reporter's latency spectrum, from 0 to 100 (= the max).
        assert [p for p, _ in step["latency_spectrum_ms"]][::7] == [0, 99, 100]
        assert step["latency_spectrum_ms"][-1][1] == step["latency_ms"]["max"]
