"""Users' sessions on the real cluster (the session's shared one, tests/conftest.py): /session through the balancer
keeps a user's kilobytes in the HttpSession of the node that served them. With stickiness (LB_STICKY=user) every
request of a user goes to that node and finds the session; without it the balancer's round robin moves the user,
and each node the user had not visited starts a new one: the user's state is lost at each move. With replication
(TOMCAT_SESSION_REPLICATION=1) a sticky user whose node dies finds the session on the node the balancer moves them
to. make bench-sessions runs on the second cluster (test_sessions_bench.py)."""
from __future__ import annotations

import json

import pytest

from conftest import IT_ENV as ENV, compose, it_up

pytestmark = pytest.mark.usefixtures("cluster")


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
    it_up(LB_STICKY="user", TOMCAT_SESSION_REPLICATION="1")
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
        it_up()  # the profile's balancer (LB_STICKY=none) and nodes without replication
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
