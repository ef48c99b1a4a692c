"""Users' sessions on the real cluster (the session's shared one, tests/conftest.py): /session through the balancer
keeps a user's kilobytes in the HttpSession of the node that served them. With stickiness (LB_STICKY=user) every
request of a user goes to that node and finds the session; without it the balancer's round robin moves the user,
and each node the user had not visited starts a new one: the user's state is lost at each move."""
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
    header = [line for line in said.stderr.splitlines() if line.lower().startswith("x-session:")]
    answer = json.loads(said.stdout)
    assert header == [f"X-Session: {answer['session']}"], said.stderr
    return answer


def test_a_sticky_user_finds_the_session_and_a_balanced_one_loses_it_at_each_move():
    it_up(LB_STICKY="user")
    try:
        sticky = [visit("it-sticky") for _ in range(6)]
    finally:
        it_up()  # the profile's balancer: LB_STICKY=none
    assert [s["session"] for s in sticky] == ["new"] + ["found"] * 5, sticky
    assert len({s["node"] for s in sticky}) == 1 and [s["requests"] for s in sticky] == [1, 2, 3, 4, 5, 6]

    roaming = [visit("it-roaming") for _ in range(6)]
    nodes = [s["node"] for s in roaming]
    assert len(set(nodes)) > 1, nodes  # weighted round robin, nothing else sending
    # A node the user was on before still has its session; any other starts one, counting from 1 again.
    assert [s["session"] for s in roaming] == ["found" if node in nodes[:i] else "new" for i, node in enumerate(nodes)]
    assert [s["requests"] for s in roaming] == [nodes[:i + 1].count(node) for i, node in enumerate(nodes)]
