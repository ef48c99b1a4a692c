"""STATE_BETWEEN's record of the nodes' state: /state's answer read per application, and the session timeout of
the application that held the most sessions, for the memory capacity."""
from __future__ import annotations

import pytest

from capbench.engine import node_state
from capbench.engine.run_summary import session_timeouts

# What the Grinder's /state answered on a node with a user's application at /shop beside it (expire=all).
ANSWER = {"contexts": 2, "active": 0, "expired": 1502, "/shop.active": 0, "/shop.timeout_s": 600,
          "/shop.expired": 1500, "/capbench.active": 0, "/capbench.timeout_s": 1800, "/capbench.expired": 2}


def test_each_applications_sessions_and_timeout():
    assert node_state.contexts(ANSWER) == {"/shop": {"active": 0, "timeout_s": 600, "expired": 1500},
                                          "/capbench": {"active": 0, "timeout_s": 1800, "expired": 2}}
    assert node_state.contexts({"contexts": 1, "active": 3, "/.active": 3, "/.timeout_s": 1800}) == {
        "/": {"active": 3, "timeout_s": 1800}}


def test_the_timeout_is_that_of_the_application_holding_the_sessions():
    state = {"mode": "expire", "nodes": {"node1": {"contexts": node_state.contexts(ANSWER)}, "node2": {"unread": "x"}}}
    targets = {"node1": {"searches": [{"state_before": state}]}, "cluster": {"searches": [{"state_before": None}]}}
    # Every node runs the same applications: node2 and node3, whose state was not read, have node1's timeout.
    assert session_timeouts(targets) == {"node1": 600, "node2": 600, "node3": 600}
    assert session_timeouts({"cluster": {"searches": [{"state_before": None}]}}) == {}


def test_each_mode_does_what_it_says_before_a_search(monkeypatch):
    asked = []

    def sessions(node, expire=False, collect=False):
        asked.append((node, expire))
        assert collect  # every reading around a search comes with the live heap
        if node == "node3":
            raise node_state.ClusterError("node3's sessions could not be read")
        live = {"heap_live_mb": 41.5} if node == "node1" else {"heap_live_why_not": "-XX:+DisableExplicitGC: ..."}
        return {**(ANSWER if expire else {"contexts": 1, "active": 7, "/.active": 7, "/.timeout_s": 1800}), **live}
    monkeypatch.setattr(node_state.jvm, "sessions", sessions)
    recreated = []
    node_state.before_warmup("expire", "cluster", ("node1", "node2"), recreated.append)
    node_state.before_warmup("restart", "cluster", ("node1", "node2"), recreated.append)
    assert recreated == [("node1", "node2")]  # only restart re-creates, before the warm-up
    carried = node_state.before_search("carry", "node1", ("node1", "node3"))
    assert asked == [("node1", False), ("node3", False)]
    assert carried["nodes"]["node1"]["active"] == 7 and "could not be read" in carried["nodes"]["node3"]["unread"]
    assert carried["nodes"]["node1"]["heap_live_mb"] == 41.5
    expired = node_state.before_search("expire", "node1", ("node1",))
    assert asked[-1] == ("node1", True) and expired["nodes"]["node1"]["expired"] == 1502
    with pytest.raises(node_state.ClusterError):  # a search that cannot start from no sessions does not start
        node_state.before_search("expire", "node3", ("node3",))


def test_after_a_search_the_sessions_and_live_heap_of_each_node_or_why_not(monkeypatch):
    def sessions(node, expire=False, collect=False):
        assert collect and not expire  # nothing is ended after a search: the next one's STATE_BETWEEN decides
        if node == "node3":
            raise node_state.ClusterError("node3's sessions could not be read: connection refused")
        return {"active": 9004, "heap_live_mb": 61.0} if node == "node1" else {
            "active": 12, "heap_live_why_not": "-XX:+DisableExplicitGC: System.gc() runs no full collection"}
    monkeypatch.setattr(node_state.jvm, "sessions", sessions)
    after = node_state.after_search(("node1", "node2", "node3"))["nodes"]
    assert after["node1"] == {"active": 9004, "heap_live_mb": 61.0}
    assert after["node2"] == {"active": 12, "heap_live_why_not": "-XX:+DisableExplicitGC: System.gc() runs no full "
                                                                 "collection"}
    assert "connection refused" in after["node3"]["unread"]
