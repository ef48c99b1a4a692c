"""make bench-sessions on the second cluster (tests/conftest.py), on the worker that also runs the Swarm lab and
the VM: node1 measured by the kB each session keeps, until the heap runs out."""
from __future__ import annotations

import json

from conftest import assert_capacity_from_the_steps, compose, run


def test_bench_sessions_measures_node1_by_session_size_and_a_heap_too_small_ends_the_jvm(second_cluster, tmp_path):
    """0 kB and 256 kB per user on node1 (320 MB heap): about 1 200 users of 256 kB fill the heap, so the JVM runs
    out of it while the search adds users; its figures say how full it was; node1 is started afresh after. Users
    come at a tenth of the rate (10 requests each) and stay: the warm-up and the first three rates, offered on any
    machine (200, 400, 800, 1600/s for 5 s each), bring 1 500, and a machine whose search fails before 1600/s
    brings as many while it bisects. (At 128 kB the 2 500 needed could outlast a slow machine's search; at 1 MB
    the JVM died within the first seconds of its warm-up, between two of PCP's samples a second apart, the last
    showing 14 % of the heap.)"""
    done = run(["make", "--no-print-directory", "bench-sessions"], timeout=1500,
               env={**second_cluster, "RESULTS_DIR": str(tmp_path), "QUICK": "1", "LOADGEN": "oha", "WORKLOAD": "session",
                    "SESSION_SIZES": "0 256", "START_RATE": "400"})
    [run_dir] = [p for p in tmp_path.iterdir() if p.is_dir()]
    summary = json.loads((run_dir / "summary.json").read_text())
    found = summary["sessions"]
    assert 250 < found["heap_max_mb"] <= 320 and found["users"] == 10000, found
    empty, large = found["sizes"]["0"], found["sizes"]["256"]
    steps = [json.loads(line) for line in (run_dir / "steps.jsonl").read_text().splitlines()]
    assert_capacity_from_the_steps(steps, "node1 0 kB", empty["capacity_rps"])
    assert not empty["collapsed"], empty
    assert empty["sessions_max"] and empty["heap_used_mb_max"] < 0.8 * found["heap_max_mb"], empty
    assert large["collapsed"] and large["why"], large
    assert large["heap_used_pct_max"] > 60, large  # PCP's samples of the steps before the JVM ended
    assert "node1 by session size" in done.stdout and "collapsed:" in done.stdout
    assert "node1" in compose("ps", "--status", "running", "--services", env=second_cluster).stdout.split()
