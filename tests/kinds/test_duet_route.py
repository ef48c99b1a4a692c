"""The duet's route check (capbench/kinds/duet.py's Duet.route): each slot's own port answered by its node alone; a
slot HAProxy took down just after it looked UP (re-created, its address being learnt) is asked again, and a route
that stays wrong ends the run naming what answered."""
from __future__ import annotations

from types import SimpleNamespace

import pytest

from capbench.hosts.backend import ClusterError
from capbench.kinds import duet


def routed(monkeypatch, answers: list[dict]) -> list[str]:
    asked: list[str] = []
    monkeypatch.setattr(duet.haproxy, "set_rotation", lambda nodes: None)
    monkeypatch.setattr(duet.haproxy, "wait_until_up", lambda nodes: asked.append("wait until up"))
    monkeypatch.setattr(duet, "routing_path", lambda: "/info")
    monkeypatch.setattr(duet.time, "sleep", lambda s: None)
    replies = iter(answers)

    def nodes_answering(url, count):
        asked.append(url)
        return next(replies)

    bench = SimpleNamespace(loads=SimpleNamespace(first=SimpleNamespace(nodes_answering=nodes_answering)),
                            steps=SimpleNamespace(SETTLE_AFTER_PASS_S=0))
    duet.Duet.route(bench)
    return asked


def test_a_slot_answered_by_the_other_node_once_is_asked_again_once_up(monkeypatch):
    n = duet.ROUTE_CHECK_REQUESTS
    asked = routed(monkeypatch, [{"node1": n}, {"node1": n}, {"node2": n}])
    assert asked == ["wait until up", "http://lb:8101/info", "wait until up", "http://lb:8102/info",
                     "wait until up", "http://lb:8102/info"]


def test_a_route_that_stays_wrong_ends_the_run_naming_what_answered(monkeypatch):
    n = duet.ROUTE_CHECK_REQUESTS
    with pytest.raises(ClusterError, match=r"port 8102's requests to node2 only, but these answered: "
                                           r"\{'node1': 4\} \(3 times asked\)"):
        routed(monkeypatch, [{"node1": n}] + [{"node1": n}] * duet.ROUTE_CHECK_ATTEMPTS)
