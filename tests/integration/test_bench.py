"""The capacity benches for real: `make bench-cluster QUICK=1 WEIGHTS=auto` on the real cluster (project
capbench-it, so a cluster of yours is untouched) with the packaged driver; bench-variants with thread dumps;
make tune interrupted and resumed; an interrupted bench keeps its steps and says it is partial; the generator
self-check; and, when a wrk2 binary is given (WRK2=…), the same with wrk2."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import IT_ENV as ENV, ROOT, assert_capacity_from_the_steps, compose, run
from hosts import runlock
from hosts.topology import NODES

pytestmark = pytest.mark.usefixtures("cluster")  # the session's one cluster (tests/conftest.py)
CHOICES = ("equal", "weighted", "leastconn")  # WEIGHTS=auto's balancings
TARGETS = (*NODES, *(f"cluster {choice}" for choice in CHOICES))
STEP_FIELDS = ("run_id", "step", "phase", "target", "url", "offered_rps", "duration_s", "connections",
               "achieved_rps", "responses", "latency_ms", "errors", "start_epoch", "end_epoch", "tool",
               "valid", "passed", "failures", "failure_pct", "loadhost")


def sigint_as_default() -> None:
    """For a child the test interrupts: SIGINT back to its default disposition. A runner started in the
    background by a shell without job control (`bash .ci/run &`) passes SIGINT on ignored, and a Python started
    so never turns it into KeyboardInterrupt: the interrupt would be lost, not tested."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def only_run(results: Path) -> Path:
    runs = [p for p in results.iterdir() if p.is_dir()]
    assert len(runs) == 1, runs
    return runs[0]


def steps_of(run_dir: Path) -> list[dict]:
    return [json.loads(line) for line in (run_dir / "steps.jsonl").read_text().splitlines()]


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
    node_sum = sum(summary["targets"][n]["capacity_rps"] for n in NODES)
    assert summary["sum_nodes_rps"] == pytest.approx(node_sum)
    # WEIGHTS=auto: the cluster under each balancing, with its E; weights follow the node capacities; the
    # cluster's capacity is the one under those weights.
    balancing = summary["balancing"]
    assert list(balancing) == list(CHOICES)
    for choice in CHOICES:
        b = balancing[choice]
        assert b["capacity_rps"] == summary["targets"][f"cluster {choice}"]["capacity_rps"]
        assert f"balancing {choice}" in done.stdout and f"E {b['efficiency']:.3f}" in done.stdout
    assert balancing["equal"]["weights"] == balancing["leastconn"]["weights"] == {n: 1 for n in NODES}
    assert (balancing["equal"]["balance"], balancing["leastconn"]["balance"]) == ("roundrobin", "leastconn")
    fastest = max(NODES, key=lambda n: summary["targets"][n]["capacity_rps"])
    assert balancing["weighted"]["weights"][fastest] == 100
    assert summary["cluster_rps"] == balancing["weighted"]["capacity_rps"]
    assert f"E = X_cluster / ΣX_i = {summary['efficiency']:.3f}" in done.stdout
    # Scale-out is there to be shown: three nodes under capacity weights carry more than the fastest alone.
    assert summary["cluster_rps"] > summary["targets"][fastest]["capacity_rps"], summary["targets"]
    # The balancer is back to the profile's: roundrobin (re-created after leastconn), weights 5:4:3.
    rows = [line.split() for line in node_states().splitlines()[2:] if line.strip()]
    assert {row[3]: row[7] for row in rows} == {"node1": "5", "node2": "4", "node3": "3"}  # srv_uweight
    algorithm = compose("exec", "-T", "lb", "sh", "-c", "echo $LB_BALANCE", env=ENV).stdout.strip()
    assert algorithm == "roundrobin"
    run_json = json.loads((run_dir / "run.json").read_text())
    assert run_json["settings"]["quick"] and run_json["driver"]["version"] == "oha 1.16.0"
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
    assert line["run_id"] == run_dir.name and line["capacities"]["cluster weighted"] == summary["cluster_rps"]
    assert line["efficiency"] == summary["efficiency"] and line["config_hash"]


def test_quick_bench_usl_sweeps_closed_loops_and_fits(tmp_path):
    done = run(["make", "--no-print-directory", "bench-usl", "QUICK=1"],
               env={**ENV, "RESULTS_DIR": str(tmp_path)}, timeout=900)
    run_dir = only_run(tmp_path)
    summary = json.loads((run_dir / "summary.json").read_text())
    assert summary["status"] == "complete"
    points = summary["usl_points"]
    assert [p["n"] for p in points] == [1, 2, 4, 8]
    for point in points:
        # A closed loop without think time keeps exactly N requests in the system: Little's law, N = X·R.
        assert point["throughput_rps"] * point["mean_latency_ms"] / 1000 == pytest.approx(point["n"], rel=0.1)
    usl_steps = [s for s in steps_of(run_dir) if s["phase"] == "usl"]
    assert [s["connections"] for s in usl_steps] == [1, 2, 4, 8]
    assert all("-q" not in s["tool"]["argv"] and s["intended"] is None for s in usl_steps)
    fit = summary["usl_fit"]
    assert "error" not in fit, fit
    # The fit recorded is the fit of these points: its curve gives back its own R² from them; and a parameter
    # held at a bound carries no standard error (the fit's covariance would give it a meaningless one).
    x = [p["throughput_rps"] for p in points]
    curve = [fit["lam"] * p["n"] / (1 + fit["sigma"] * (p["n"] - 1) + fit["kappa"] * p["n"] * (p["n"] - 1))
             for p in points]
    total = sum((v - sum(x) / len(x)) ** 2 for v in x)
    r_squared = 1 - sum((v - c) ** 2 for v, c in zip(x, curve)) / total if total > 0 else 1.0
    assert fit["points"] == len(points) and fit["r_squared"] == pytest.approx(r_squared, rel=1e-9, abs=1e-9)
    assert all(fit[f"{name}_err"] is None for name in fit["at_bound"]), fit
    assert "USL: σ = " in done.stdout and (run_dir / "figures" / "usl.png").is_file()
    assert "σ (contention)" in (run_dir / "report.html").read_text()


def test_quick_bench_scaleout_measures_every_n_and_each_node_alone(tmp_path):
    done = run(["make", "--no-print-directory", "bench-scaleout", "QUICK=1"],
               env={**ENV, "RESULTS_DIR": str(tmp_path), "LOADGEN": "oha"}, timeout=1800)
    run_dir = only_run(tmp_path)
    summary = json.loads((run_dir / "summary.json").read_text())
    steps = steps_of(run_dir)
    assert summary["status"] == "complete"
    # The default profile's nodes differ: besides N = 1 … 3, node2 and node3 are measured alone for the ideal.
    curve = [f"N={n}" for n in range(1, len(NODES) + 1)]
    targets = json.loads((run_dir / "run.json").read_text())["targets"]
    assert targets == [*curve, *NODES[1:]]
    capacity = {t: summary["targets"][t]["capacity_rps"] for t in targets}
    for target in targets:
        assert_capacity_from_the_steps(steps, target, capacity[target])
    alone = {NODES[0]: capacity["N=1"], **{node: capacity[node] for node in NODES[1:]}}
    points = summary["scaleout"]["points"]
    assert [(p["n"], p["nodes"], p["capacity_rps"]) for p in points] == \
        [(n, list(NODES[:n]), capacity[f"N={n}"]) for n in range(1, len(NODES) + 1)]
    for p in points:
        assert p["ideal_basis"] == "ΣX_i" and p["ideal_rps"] == pytest.approx(sum(alone[n] for n in p["nodes"]))
        assert p["efficiency"] == round(p["capacity_rps"] / p["ideal_rps"], 3)
        # PCP at each point's capacity: the balancer's and the generator's CPU, the machine's idle share.
        assert p["lb_cpu_cores"] > 0 and p["generator_cpu_pct"] > 0 and 0 <= p["machine_idle_pct"] <= 100, p
    # Three node counts cannot carry the USL's three parameters (four are needed to judge the fit): the run says
    # so rather than inventing one; the fit over N itself is tested on synthetic curves (tests/report).
    fit = summary["scaleout"]["fit"]
    assert "too few points" in fit["error"] and "USL over N: no fit: too few points" in done.stdout, fit
    assert "ideal: ΣX_i" in done.stdout
    assert (run_dir / "figures" / "scaleout.png").is_file()
    assert "Scale-out: capacity by nodes in rotation" in (run_dir / "report.html").read_text()
    [line] = [json.loads(text) for text in (tmp_path / "history.jsonl").read_text().splitlines()]
    assert line["scaleout"] == {str(p["n"]): p["efficiency"] for p in points}


def test_quick_bench_variants_records_capacities_gc_and_locks(tmp_path):
    done = run(["make", "--no-print-directory", "bench-variants", "QUICK=1", "VARIANTS=v1 v3"],
               env={**ENV, "RESULTS_DIR": str(tmp_path), "LOADGEN": "oha"}, timeout=1800)
    run_dir = only_run(tmp_path)
    summary = json.loads((run_dir / "summary.json").read_text())
    assert summary["status"] == "complete" and list(summary["variants"]) == ["v1", "v3"]
    steps = steps_of(run_dir)
    for variant in ("v1", "v3"):
        v = summary["variants"][variant]
        assert_capacity_from_the_steps(steps, f"node1 {variant}", v["node1_rps"])
        assert_capacity_from_the_steps(steps, f"cluster {variant}", v["cluster_rps"])
        # Every step of the variant asked for it.
        assert all(f"variant={variant}&" in s["url"] for s in steps if s["label"].endswith(variant)), variant
        figures = summary["targets"][f"node1 {variant}"]["metrics_at_capacity"]["node1"]
        assert figures["alloc_mb_per_s"] > 0 and figures["gc_time_pct"] is not None
        for where, nodes in (("node1", NODES[:1]), ("cluster", NODES)):
            evidence = v["evidence"][where]
            assert evidence["offered_rps"] == v[f"{where}_rps"] and not evidence["dump_errors"]
            for node in nodes:
                dumps = evidence["thread_dumps"][node]
                assert dumps["dumps"] == 4 and dumps["unreadable"] == 0 and dumps["request_threads"] >= 1
                assert len(list((run_dir / "raw").glob(f"step-{evidence['step']:03d}-{node}-threaddump-*.txt"))) == 4
    # v1 grinds on one synchronized instance: at its capacity request threads queue for that monitor, and of the
    # servlet's own monitors for no other; v3's threads can only wait for one of its pool's ReusingGrinders.
    # Tomcat's own monitors may show up briefly too (a CI dump caught one thread on StandardContext's filter map,
    # a java.util.HashMap), so those are left out of the servlet's claim and only bounded for v1.
    def blocked(variant):
        found = {}
        for evidence in summary["variants"][variant]["evidence"].values():
            for dumps in evidence["thread_dumps"].values():
                for monitor, mean in dumps["blocked_on"].items():
                    found[monitor] = found.get(monitor, 0) + mean
        return found
    def servlets_own(found):
        return {monitor for monitor in found if monitor.startswith("capbench.")}
    v1, v3 = blocked("v1"), blocked("v3")
    assert servlets_own(v1) == {"capbench.grinder.SynchronizedAllocatingGrinder"}, v1
    assert v1["capbench.grinder.SynchronizedAllocatingGrinder"] > sum(v1.values()) / 2, v1
    assert servlets_own(v3) <= {"capbench.grinder.ReusingGrinder"}, v3
    assert "blocked on capbench.grinder.SynchronizedAllocatingGrinder" in done.stdout
    page = (run_dir / "report.html").read_text()
    assert "The study's investigation, with our numbers" in page and (run_dir / "figures" / "variants.png").is_file()


def test_quick_tune_resumes_after_an_interruption(tmp_path):
    env = {**os.environ, **ENV, "RESULTS_DIR": str(tmp_path), "QUICK": "1", "LOADGEN": "oha",
           "MAXTHREADS": "4,200"}
    tune = subprocess.Popen([sys.executable, "-m", "load.tune"], cwd=ROOT, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True, preexec_fn=sigint_as_default)
    seen = []
    for line in tune.stdout:  # interrupt once the first point is finished and the second has begun
        seen.append(line)
        if "point 2/2: MAXTHREADS=200" in line:
            break
    tune.send_signal(signal.SIGINT)
    output = "".join(seen) + tune.communicate(timeout=600)[0]
    assert tune.returncode == 130, output
    assert "interrupted: the finished points are kept" in output
    [root] = [p for p in tmp_path.iterdir() if p.name.endswith("-tune")]
    assert json.loads((root / "tune.json").read_text())["status"] == "partial"
    done = run(["make", "--no-print-directory", "tune", "MAXTHREADS=4,200"],
               env={**ENV, "RESULTS_DIR": str(tmp_path), "QUICK": "1", "LOADGEN": "oha"}, timeout=1800)
    assert f"resuming: 1 finished before are kept → {root}" in done.stdout
    assert "point 1/2: MAXTHREADS=4: finished before, kept" in done.stdout
    tune_json = json.loads((root / "tune.json").read_text())
    assert tune_json["status"] == "complete"
    rows = {r["label"]: r for r in tune_json["rows"]}
    assert set(rows) == {"MAXTHREADS=4", "MAXTHREADS=200"} and rows["MAXTHREADS=200"]["baseline"]
    for label, row in rows.items():
        point = next(p for p in (root / "points").iterdir() if (p / "summary.json").exists()
                     and json.loads((p / "summary.json").read_text())["targets"]["node1"]["capacity_rps"]
                     == row["capacity_rps"])
        assert_capacity_from_the_steps(steps_of(point), "node1", row["capacity_rps"])
    # Each point ran with its setting: node1's thread pool capped at 4 threads in the first.
    first = json.loads(next((root / "points").glob("01-*/summary.json")).read_text())
    assert first["targets"]["node1"]["metrics_at_capacity"]["node1"]["max_threads"] == 4
    assert tune_json["analysis"]["best"] in rows and tune_json["analysis"]["recommendation"]
    assert (root / "figures" / "tune.png").is_file() and "Recommended" in (root / "tune.html").read_text()
    # The cluster is back at its configured settings: Tomcat's default pool of 200.
    node_env = compose("exec", "-T", "node1", "sh", "-c", "echo $TOMCAT_MAX_THREADS", env=ENV).stdout.strip()
    assert node_env == "200"


def node_states() -> str:
    return run([str(ROOT / "cluster" / "lb-api.sh"), "show servers state nodes"], env=ENV).stdout


def test_interrupted_bench_keeps_its_steps_and_is_marked_partial(tmp_path):
    env = {**os.environ, **ENV, "RESULTS_DIR": str(tmp_path), "QUICK": "1", "LOADGEN": "oha"}
    bench = subprocess.Popen([sys.executable, "-m", "load.bench", "single"], cwd=ROOT, env=env,
                             stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                             preexec_fn=sigint_as_default)
    deadline = time.monotonic() + 180
    while time.monotonic() < deadline:
        runs = [p for p in tmp_path.iterdir() if (p / "steps.jsonl").exists()]
        if runs and len(steps_of(runs[0])) >= 2:
            break
        time.sleep(0.5)
    # A second bench on the same cluster while this one runs is refused before it starts anything.
    second = subprocess.run([sys.executable, "-m", "load.bench", "cluster"], cwd=ROOT, env=env,
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


def test_selfcheck_generator_keeps_the_rate(tmp_path):
    done = run([sys.executable, "-m", "load.bench", "selfcheck"],
               env={**ENV, "RESULTS_DIR": str(tmp_path), "SELFCHECK_RATE": "1000", "STEP_S": "10",
                    "LOADGEN": "oha"}, timeout=300, check=False)
    summary = json.loads((only_run(tmp_path) / "summary.json").read_text())
    verdict = summary["targets"]["lb"]["searches"][0]["selfcheck"]
    assert abs(verdict["achieved_pct"] - 100) <= 1, verdict
    assert verdict["loadhost_cpu_pct"] is not None
    assert done.returncode == 0 and "generator keeps up" in done.stdout


@pytest.mark.skipif(not os.environ.get("WRK2"), reason="no wrk2 binary: set WRK2=/path/to/wrk2 to run the wrk2 "
                    "bench (DEVELOPERS.md says how to build one by hand)")
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
