"""bench-usl and bench-variants for real, on a second Compose cluster of the integration tests (project
capbench-it2, bench network 10.89.2.0/24: tests/conftest.py), on the worker that also runs the unit tests, the
Swarm lab and the VM, so that these benches take none of the first cluster's minutes. Nothing here depends on the first cluster's state: closed loops on node1 that obey Little's law and a
USL fit; the Grinder's v1 and v3 on node1 and the cluster with their allocation, GC and thread dumps."""
from __future__ import annotations

import json

import pytest

from capbench.hosts.topology import NODES
from capbench.kinds.variants import EVIDENCE_MIN_S
from conftest import SEARCH_FOR_TESTS, assert_capacity_from_the_steps, only_run, run, steps_of


def test_quick_bench_usl_sweeps_closed_loops_and_fits(second_cluster, tmp_path):
    done = run(["make", "--no-print-directory", "bench-usl", "QUICK=1"],
               env={**second_cluster, "RESULTS_DIR": str(tmp_path), "MONITOR": "off"}, timeout=900)
    run_dir = only_run(tmp_path)
    summary = json.loads((run_dir / "summary.json").read_text())
    assert summary["status"] == "complete"
    points = summary["usl"]["points"]
    assert [p["n"] for p in points] == [1, 2, 4, 8]
    for point in points:
        # A closed loop without think time keeps exactly N requests in the system: Little's law, N = X·R.
        assert point["throughput_rps"] * point["mean_latency_ms"] / 1000 == pytest.approx(point["n"], rel=0.1)
    usl_steps = [s for s in steps_of(run_dir) if s["phase"] == "usl"]
    assert [s["connections"] for s in usl_steps] == [1, 2, 4, 8]
    assert all("-q" not in s["tool"]["argv"] and s["intended"] is None for s in usl_steps)
    fit = summary["usl"]["fit"]
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
    # λ (the throughput of one connection) is never at its bound of 0, and four points fit three parameters
    # with a degree of freedom left: it has a standard error.
    assert "lam" not in fit["at_bound"] and fit["lam_err"] is not None and fit["lam_err"] >= 0, fit
    assert "USL: σ = " in done.stdout and (run_dir / "figures" / "usl.png").is_file()
    assert "σ (contention)" in (run_dir / "report.html").read_text()


def blocked_on(variant: dict) -> dict[str, float]:
    """The threads blocked on each monitor over a variant's evidence steps (the dumps' means, summed)."""
    found: dict[str, float] = {}
    for evidence in variant["evidence"].values():
        for dumps in evidence["thread_dumps"].values():
            for monitor, mean in dumps["blocked_on"].items():
                found[monitor] = found.get(monitor, 0) + mean
    return found


def servlets_own(found: dict[str, float]) -> set[str]:
    return {monitor for monitor in found if monitor.startswith("capbench.")}


def test_quick_bench_variants_records_capacities_gc_and_locks(second_cluster, tmp_path):
    # The tests' 3 s steps for the searches; an evidence step lasts 5 s all the same, its four thread dumps of
    # each node a second apart. The profiles at capacity (JFR=auto is on here) cost four minutes of CI beside the
    # other worker: the test below profiles one capacity instead. The searches start at 250/s, below node1's v1
    # (475–525/s alone, docs/findings.md): from the tests' 100/s, a doubling or two more each.
    done = run(["make", "--no-print-directory", "bench-variants", "QUICK=1", "VARIANTS=v1"],
               env={**second_cluster, "RESULTS_DIR": str(tmp_path), "LOADGEN": "oha", "JFR": "off",
                    "START_RATE": "250"},
               timeout=1800)
    run_dir = only_run(tmp_path)
    summary = json.loads((run_dir / "summary.json").read_text())
    assert summary["status"] == "complete" and list(summary["variants"]["variants"]) == ["v1"]
    steps = steps_of(run_dir)
    variant = "v1"
    v = summary["variants"]["variants"][variant]
    assert_capacity_from_the_steps(steps, f"node1 {variant}", v["node1_rps"])
    assert_capacity_from_the_steps(steps, f"cluster {variant}", v["cluster_rps"])
    # Every step of the variant asked for it.
    assert all(f"variant={variant}&" in s["url"] for s in steps if s["label"].endswith(variant)), variant
    figures = summary["targets"][f"node1 {variant}"]["metrics_at_capacity"]["node1"]
    assert figures["alloc_mb_per_s"] > 0 and figures["gc_time_pct"] is not None
    for where, nodes in (("node1", NODES[:1]), ("cluster", NODES)):
        evidence = v["evidence"][where]
        assert evidence["offered_rps"] == v[f"{where}_rps"] and not evidence["dump_errors"]
        # The evidence step lasts its own 5 s, the search's later steps the tests' 3 s.
        [step] = [s for s in steps if s["step"] == evidence["step"]]
        assert step["duration_s"] == EVIDENCE_MIN_S, step["duration_s"]
        assert {s["duration_s"] for s in steps if s["label"] == f"{where} {variant}"
                and s["phase"] == "search"} >= {int(SEARCH_FOR_TESTS["QUICK_STEP_S"])}
        for node in nodes:
            dumps = evidence["thread_dumps"][node]
            assert dumps["dumps"] == 4 and dumps["unreadable"] == 0 and dumps["request_threads"] >= 1
            assert len(list((run_dir / "raw").glob(f"step-{evidence['step']:03d}-{node}-threaddump-*.txt"))) == 4
    # v1 grinds on one synchronized instance: at its capacity request threads queue for that monitor, and of the
    # servlet's own monitors for no other. Tomcat's own monitors may show up briefly too (a CI dump caught one
    # thread on StandardContext's filter map, a java.util.HashMap), so those are left out of the servlet's claim and
    # only bounded. (v3 against v1, two variants' searches of about 2.5 minutes each beside the other worker, is a
    # claim for a quiet machine: tests/claims; which monitor each variant takes is the webapp's LockingTest.)
    found = blocked_on(summary["variants"]["variants"]["v1"])
    assert servlets_own(found) == {"capbench.grinder.SynchronizedAllocatingGrinder"}, found
    assert found["capbench.grinder.SynchronizedAllocatingGrinder"] > sum(found.values()) / 2, found
    assert "blocked on capbench.grinder.SynchronizedAllocatingGrinder" in done.stdout
    page = (run_dir / "report.html").read_text()
    assert "The study's investigation, with our numbers" in page and (run_dir / "figures" / "variants.png").is_file()


def test_quick_bench_single_profiles_v1_at_its_capacity(second_cluster, tmp_path):
    """JFR at node1's capacity on v1: the pair of steps, the recording kept and read, its flame graphs drawn, the
    heap counted; the profile names v1's one monitor; the report links it all."""
    done = run(["make", "--no-print-directory", "bench-single", "QUICK=1", "VARIANT=v1", "JFR=on"],
               env={**second_cluster, "RESULTS_DIR": str(tmp_path), "LOADGEN": "oha", "MONITOR": "off",
                    "QUICK_JFR_STEP_S": "5"},
               timeout=900)
    run_dir = only_run(tmp_path)
    summary = json.loads((run_dir / "summary.json").read_text())
    profiles = json.loads((run_dir / "profiles.json").read_text())
    assert summary["status"] == "complete" and list(profiles) == ["node1"]
    found = profiles["node1"]
    assert not found["problems"], found["problems"]
    assert found["offered_rps"] == summary["targets"]["node1"]["capacity_rps"]
    steps = {s["step"]: s for s in steps_of(run_dir)}
    assert steps[found["unprofiled"]["step"]]["phase"] == "unprofiled"
    assert steps[found["profiled"]["step"]]["phase"] == "profiled"
    assert found["overhead"]["pairs"] == 1 and found["overhead"]["achieved_ratio"] > 0
    read = found["nodes"]["node1"]
    assert list(found["nodes"]) == ["node1"] and (run_dir / "profiles" / read["recording"]).stat().st_size > 0
    assert set(read["flame_graphs"]) == {"cpu", "alloc", "lock"}
    for page in read["flame_graphs"].values():
        assert (run_dir / "profiles" / page).read_text().startswith("<!DOCTYPE html>")
    tables = read["tables"]
    # Only the profiled step is counted (its window), not the recorder's settling before it. The window is the
    # step's own, from its first request sent to its last answered: 5.7 s for a 5-s step in CI (2026-11-28).
    profiled = steps[found["profiled"]["step"]]
    window_s = profiled["end_epoch"] - profiled["start_epoch"]
    assert tables["cpu_samples"] > 0 and tables["allocation_bytes"] and 2 < tables["seconds"] <= window_s + 0.01
    # The CPU samples are async-profiler's (perf events where the container allows them, else the CPU-time timer),
    # and its flame graph is the CPU graph; the table's samples are the stacks kept.
    sampler = read["cpu_profiler"]
    assert sampler["by"] == "async-profiler" and sampler["event"] in ("cpu", "itimer"), sampler
    assert read["flame_graphs"]["cpu"].endswith("-cpu.html")
    stacks = (run_dir / "profiles" / read["recording"].replace(".jfr", "-cpu.collapsed")).read_text()
    assert sum(int(line.rsplit(" ", 1)[1]) for line in stacks.splitlines()) == tables["cpu_samples"]
    # The thread that holds v1's monitor grinds: of the Grinder's innermost frames, the allocating Grinder's own
    # work (its reverse and grind together) weighs most, with the synchronized wrapper on every one of those
    # stacks. By class, not by method (the Grinder's work is two methods), and among the Grinder's classes only:
    # the servlet's one call to the JVM for the bytes a request allocated can outweigh the Grinder's whole work
    # (CI of 34ace5d: GrindServlet.allocatedBytes 397 ms, AllocatingGrinder.reverse 294 and grind 277; CI of
    # 8d44a56: allocatedBytes 904 ms in 263 samples), which is the profile's to explain, not this test's.
    by_class: dict[str, float] = {}
    for row in tables["cpu_application_self"]:
        if row["name"].startswith("capbench.grinder."):
            by_class[row["name"].rpartition(".")[0]] = by_class.get(row["name"].rpartition(".")[0], 0) + row["total"]
    assert max(by_class, key=by_class.get) == "capbench.grinder.AllocatingGrinder", tables["cpu_application_self"]
    ground = sum(r["count"] for r in tables["cpu_application_self"]
                 if r["name"].startswith("capbench.grinder.AllocatingGrinder."))
    anywhere = {r["name"]: r["count"] for r in tables["cpu_application"]}
    # On all but a stack async-profiler could not walk to its root, which loses its outer frames (CI of 0902799:
    # the wrapper on 306 of 307): the stacks without it are printed if more than one in a hundred lack it.
    unwrapped = [line for line in stacks.splitlines() if "capbench/grinder/AllocatingGrinder." in line
                 and "SynchronizedAllocatingGrinder.grind" not in line]
    assert anywhere["capbench.grinder.SynchronizedAllocatingGrinder.grind"] >= 0.99 * ground, (anywhere, unwrapped)
    # v1 serialises every request on its one Grinder: the longest waits are for that monitor, in the servlet.
    monitor = tables["monitors_ms"][0]
    assert monitor["name"] == "capbench.grinder.SynchronizedAllocatingGrinder", tables["monitors_ms"]
    assert monitor["stack"][0] == "capbench.grinder.SynchronizedAllocatingGrinder.grind"
    assert read["heap_holders"] and read["heap_holders"][0]["bytes"] > 0
    assert any(h["name"].startswith("org.apache.") for h in read["heap_classes_not_the_jdks"])
    assert (run_dir / "profiles" / read["recording"].replace(".jfr", "-histogram.txt")).is_file()
    # v1 keeps nothing it allocates: in one 5-s step a single live object was sampled, without a path. The paths
    # themselves are tests/profiling's (the same dump command, by jcmd) and the findings' session runs.
    assert tables["old_objects"] >= sum(r["count"] for r in tables["held_by"])  # the top rows of all it sampled
    assert "blocked on the monitor of capbench.grinder.SynchronizedAllocatingGrinder" in done.stdout
    # The kernel's account of the JVM's threads over the profiled step, read before and after it: Tomcat's request
    # threads ran on a CPU, and each thread's time on one, waiting for one and off it adds up to the step.
    request = tables["request_threads"]
    assert request["threads"] >= 1 and request["cpu_s"] > 0 and request["seconds"] >= window_s - 1, request
    accounted = request["cpu_s"] + request["run_delay_s"] + request["off_cpu_s"]
    assert accounted == pytest.approx(request["threads"] * request["seconds"], rel=0.01), request
    assert "request threads" in {r["name"] for r in tables["thread_time"]}
    assert (run_dir / "profiles" / read["recording"].replace(".jfr", "-threads.txt")).is_file()
    assert "request threads over" in done.stdout
    page = (run_dir / "report.html").read_text()
    assert "Profiles at capacity (JDK Flight Recorder, async-profiler)" in page
    assert f'href="profiles/{read["flame_graphs"]["cpu"]}"' in page and "cpu flame graph" in page
