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


def test_bench_sessions_records_the_heap_filling_until_node1s_jvm_runs_out_of_it(tmp_path):
    """128 kB per user on node1 (320 MB heap): about 2 400 users of 128 kB fill the heap, so the JVM runs out of it
    while the search adds users; its figures say how full it was; node1 is started afresh after. oha picks a user
    at random for each request, so n requests bring about 10 000 × (1 − e^(−n/10 000)) users and they stay: the
    warm-up (200/s for 5 s) brings about 950, the first rate (400/s) the rest within its 5 s, on any machine.
    How many of those seconds PCP (a sample a second) still saw depends on when the JVM, its half core busy with
    requests and GC, stopped answering the scrapes: the last sample showed 69 % of the heap in CI on 2026-11-27
    (1734 sessions) and 46.6 % on 2026-11-28 (926, the warm-up's users); so what is asserted is that the figures
    hold at least the warm-up's users and the heap their payload takes. (At 256 kB the warm-up alone brought the
    heap to the edge and the next samples came from a JVM already lost in GC; at 1 MB the JVM died within the
    first seconds of its warm-up, the last sample showing 14 %.) A size that fits has a capacity found as every search's is
    (bench-sessions' table of sizes: its unit test); measuring one here took two minutes of the suite."""
    done = run(["make", "--no-print-directory", "bench-sessions"], timeout=1500,
               env={**ENV, "RESULTS_DIR": str(tmp_path), "QUICK": "1", "LOADGEN": "oha",
                    "WORKLOAD": "session", "SESSION_SIZES": "128", "START_RATE": "400", "QUICK_STEP_S": "5"})
    [run_dir] = [p for p in tmp_path.iterdir() if p.is_dir()]
    summary = json.loads((run_dir / "summary.json").read_text())
    found = summary["sessions"]
    assert 250 < found["heap_max_mb"] <= 320 and found["users"] == 10000, found
    large = found["sizes"]["128"]
    assert large["collapsed"] and large["why"] and large["capacity_rps"] is None, large
    # PCP's samples of the steps before the JVM ended: at least the warm-up's users (about 950), and the heap's
    # share stated beside its megabytes.
    assert large["sessions_max"] > 500 and large["heap_used_pct_max"] is not None, large
    # Tomcat's count of sessions and the heap come from the same scrapes: the peak held nearly all their payload.
    # Not all: the exporter reads the heap before Tomcat's count, and a session is counted from its creation,
    # before its request sets the payload (CI, 2026-11-27: 1734 sessions, 214.4 MB held, 19 sessions short).
    assert large["heap_used_mb_max"] >= 0.95 * large["sessions_max"] * 128 / 1024, large
    assert "node1 by session size" in done.stdout and "collapsed:" in done.stdout
    assert "node1" in compose("ps", "--status", "running", "--services", env=ENV).stdout.split()
