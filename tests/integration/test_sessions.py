"""Users' sessions on the second cluster (tests/conftest.py), on the worker that also runs the Swarm lab and the VM:
/session through the balancer keeps a user's kilobytes in the HttpSession of the node that served them. With
stickiness (LB_STICKY=user) every request of a user goes to that node and finds the session; without it the
balancer's round robin moves the user, and each node the user had not visited starts a new one: the user's state
is lost at each move. With replication (TOMCAT_SESSION_REPLICATION=1) a sticky user whose node dies finds the
session on the node the balancer moves them to. make bench-sessions measures node1 by the kB each session keeps,
until the heap runs out."""
from __future__ import annotations

import json

import pytest

from conftest import IT2_ENV as ENV, compose, it_up, run

pytestmark = pytest.mark.usefixtures("second_cluster")


def visit(user: str, kb: int = 8) -> dict:
    """One request of `user` as the load generators send it (no cookie: the balancer makes it from the user id),
    with the X-Session header the balancer logs."""
    said = compose("exec", "-T", "load", "curl", "-fsS", "--max-time", "10", "-D", "/dev/stderr",
                   f"http://lb:8080/session?kb={kb}&user={user}", env=ENV, timeout=60)
    header = [line.strip().lower() for line in said.stderr.splitlines() if line.lower().startswith("x-session:")]
    answer = json.loads(said.stdout)
    assert header == [f"x-session: {answer['session']}"], said.stderr  # HAProxy passes header names lowercased
    return answer


def test_a_sticky_user_finds_the_session_and_keeps_it_across_a_node_kill_with_replication_and_a_balanced_one_loses_it():
    it_up(ENV, LB_STICKY="user", TOMCAT_SESSION_REPLICATION="1")
    killed = None
    try:
        sticky = [visit("it-sticky") for _ in range(6)]
        killed = sticky[0]["node"]
        compose("kill", "--signal", "SIGKILL", killed, env=ENV)
        # HAProxy's connect to the dead node fails (1 s), and it redispatches the user to a live node, which holds a
        # replica of the session: found, with the count the user's six requests left in it.
        moved = [visit("it-sticky") for _ in range(2)]
    finally:
        if killed:
            compose("start", killed, env=ENV, timeout=300)
        it_up(ENV)  # the profile's balancer (LB_STICKY=none) and nodes without replication
    assert [s["session"] for s in sticky] == ["new"] + ["found"] * 5, sticky
    assert len({s["node"] for s in sticky}) == 1 and [s["requests"] for s in sticky] == [1, 2, 3, 4, 5, 6]
    assert [s["session"] for s in moved] == ["found", "found"], moved
    assert moved[0]["node"] != killed and moved[1]["node"] == moved[0]["node"], (killed, moved)
    assert [s["requests"] for s in moved] == [7, 8], moved

    roaming = [visit("it-roaming") for _ in range(6)]
    nodes = [s["node"] for s in roaming]
    assert len(set(nodes)) > 1, nodes  # weighted round robin, nothing else sending
    # A node the user was on before still has its session; any other starts one, counting from 1 again.
    assert [s["session"] for s in roaming] == ["found" if node in nodes[:i] else "new" for i, node in enumerate(nodes)]
    assert [s["requests"] for s in roaming] == [nodes[:i + 1].count(node) for i, node in enumerate(nodes)]


def test_a_heap_filling_with_sessions_is_named_degraded_with_its_memory_capacity(tmp_path):
    """node1 (320 MB of heap) with 2 kB per user and 150 000 users: oha picks a user at random for each request and
    sessions last 30 minutes, so every step adds users (n requests bring about 150 000 × (1 − e^(−n/150 000))) and
    the heap fills with time, not with the rate. In the trial (docs/findings.md, 2026-11-28) 3200/s passed with 23 556
    sessions, then every rate down to 1600/s failed with 114 270, the live heap at 309 of 309 MB and GC at 93 %, and
    the JVM ran out of heap. What a user must be told: the search started with no sessions (STATE_BETWEEN=expire),
    a rate carried early did not hold later, node1 degraded, memory-bound by its sessions, and what one session costs
    (2.4 ± 0.06 kB in the trial: the 2-kB payload and Tomcat's own). The search runs at QUICK's own precision and
    5-s steps: the heap must fill while it searches, and it fills by requests, which a slow hour sends fewer of (in
    CI's run of 113f1a4, beside the other worker, 1500/s was node1's capacity, found and held for 15 s with the heap
    not yet full). The 30-s hold (6 windows) is where such an hour gets the requests it lacks; a fast one fails it in
    its first windows (2026-11-29: held 5 s at 3000/s with node1 at a quarter core, 0 s at 3200/s beside four busy
    loops). 14 steps reach the failures after the pass (in the test's first run, on 2026-11-28: 3000/s passed at
    step 10, its hold failed after 10 s at step 13, then 11 more steps down to 400/s took two minutes more and said
    nothing new). It replaced bench-sessions' 128-kB collapse, whose heap filled within one step (the same run ends
    the same way, node1 started afresh after it)."""
    done = run(["make", "--no-print-directory", "bench-sessions"], timeout=1500,
               env={**ENV, "RESULTS_DIR": str(tmp_path), "QUICK": "1", "LOADGEN": "oha", "WORKLOAD": "session",
                    "SESSION_SIZES": "2", "USERS": "150000", "START_RATE": "1600", "QUICK_STEP_S": "5",
                    "QUICK_PRECISION_PCT": "7", "QUICK_HOLD_S": "30", "MAX_STEPS": "14"})
    [run_dir] = [p for p in tmp_path.iterdir() if p.is_dir()]
    summary = json.loads((run_dir / "summary.json").read_text())
    target = summary["targets"]["node1 2 kB"]
    [search] = target["searches"]
    assert search["state_before"]["mode"] == "expire" and search["state_before"]["nodes"]["node1"]["active"] == 0
    steps = [json.loads(line) for line in (run_dir / "steps.jsonl").read_text().splitlines()]
    own = [s for s in steps if s["label"] == "node1 2 kB" and s["phase"] != "warmup"]
    # A rate carried in the search and not kept later: a hold, a recheck or a lower rate failing after it.
    carried = {s["offered_rps"] for s in own if s["passed"]}
    assert any(not s["passed"] and s["offered_rps"] <= max(carried) and s["step"] > min(
        t["step"] for t in own if t["passed"] and t["offered_rps"] >= s["offered_rps"]) for s in own), own
    assert target["status"] == "degraded", target
    degraded = target["degraded"]
    assert degraded["cause"] == "memory-bound by its sessions", degraded
    # Said of a heap that filled with GC while the sessions grew: P's own sessions are their baseline (they last
    # 30 minutes), and in a fast hour most of the pool is open by then (CI of 0902799: 86 920 → 113 430, 1.3×, the
    # live heap 241 → 309 of 309 MB, GC 16 → 63 %), so a tenth is the rule (capbench/analysis/state_drift.py).
    node1 = degraded["nodes"]["node1"]
    before, after = node1["sessions_max"]
    heap_before, heap_after = node1["heap_floor_mb"]
    assert after >= 1.1 * before and after - before >= 100, degraded
    assert heap_after >= 1.2 * heap_before and node1["gc_time_pct"][1] >= 10, degraded
    assert "node1 2 kB degraded during its search: sessions held" in done.stdout
    memory = summary["memory_capacity"]["node1"]
    assert 2.0 <= memory["kb_per_session"] <= 4.0, memory  # the payload and Tomcat's own session
    assert memory["timeout_s"] == 1800 and memory["sessions_heap_holds"] > 0 and memory["new_users_per_s"] > 0, memory
    assert "memory capacity: node1:" in done.stdout
    assert "node1" in compose("ps", "--status", "running", "--services", env=ENV).stdout.split()
