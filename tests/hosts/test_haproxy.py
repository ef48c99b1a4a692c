"""HAProxy's runtime-API answers, parsed once (capbench/hosts/haproxy.py), from what our lb printed (tests/hosts/data/,
README.md there says how each was captured)."""
from __future__ import annotations

from pathlib import Path

import pytest

from capbench.hosts import haproxy
from capbench.hosts.backend import ClusterError

DATA = Path(__file__).parent / "data"


def test_server_states_say_who_is_up_and_who_is_in_maintenance():
    states = haproxy.parse_server_states((DATA / "show-servers-state.txt").read_text())
    assert states == {"node1": {"up": "yes", "admin": "ready", "address": "10.89.1.3", "weight": "5"},
                      "node2": {"up": "yes", "admin": "ready", "address": "10.89.1.2", "weight": "4"},
                      "node3": {"up": "yes", "admin": "ready", "address": "10.89.1.4", "weight": "3"}}
    # node2 put in maintenance (HAProxy then reports it stopped too), node3's container stopped.
    states = haproxy.parse_server_states((DATA / "show-servers-state-maint-down.txt").read_text())
    assert {node: (s["up"], s["admin"]) for node, s in states.items()} == {
        "node1": ("yes", "ready"), "node2": ("no", "maint"), "node3": ("no", "ready")}


def test_stat_rows_give_each_node_and_the_requests_in_the_nodes():
    rows = haproxy.parse_stat((DATA / "show-stat.csv").read_text())
    servers = haproxy.server_stats(rows)
    assert sorted(servers) == ["node1", "node2", "node3"]
    assert [servers[n]["weight"] for n in ("node1", "node2", "node3")] == ["5", "4", "3"]
    assert all(servers[n]["status"] == "UP" for n in servers)
    backend = next(r for r in rows if r["pxname"] == "nodes" and r["svname"] == "BACKEND")
    assert haproxy.requests_in_nodes(rows) == int(backend["qcur"]) + int(backend["scur"])
    with pytest.raises(ClusterError, match="no BACKEND row"):
        haproxy.requests_in_nodes([r for r in rows if r["svname"] != "BACKEND"])


def test_make_up_reseats_the_nodes_in_rotation_and_leaves_one_in_maintenance(monkeypatch):
    sent = []

    def api(command: str) -> str:
        sent.append(command)
        return (DATA / "show-servers-state-maint-down.txt").read_text() if command.startswith("show") else ""

    monkeypatch.setattr(haproxy, "api", api)
    haproxy.reseat_rotation()
    one_pass = ["set server nodes/node1 state maint", "set server nodes/node1 state ready",
                "set server nodes/node3 state maint", "set server nodes/node3 state ready"]
    assert sent[1:] == one_pass * 2


def test_the_load_frontends_counters_are_read_from_its_typed_stats():
    counters = haproxy.parse_typed_counters((DATA / "show-stat-bench-typed.txt").read_text())
    assert set(counters) == set(haproxy.FRONTEND_COUNTERS)  # HAProxy 2.6 counts every one the harness reads
    assert counters["req_tot"] == 914 and counters["h2_backend_total_streams"] == 900
    assert counters["h1_total_streams"] == 14 and counters["ssl_sess"] == 0
    assert haproxy.parse_typed_counters("F.2.0.0.pxname.1:KNS:str:bench\nnot a line\n") == {}


def test_the_nodes_backends_counters_are_read_from_its_backend_line():
    # The nodes' backend after a few steps with NODE_HTTP=2 (HAProxy 2.6.12, 2026-12-07): every request an HTTP/2
    # stream, most on a connection already open; the health checks' streams (not requests) beside them.
    counters = haproxy.parse_typed_counters((DATA / "show-stat-nodes-backend-typed.txt").read_text(),
                                            haproxy.BACKEND_COUNTERS, "B")
    assert counters == {"req_tot": 3021, "connect": 108, "reuse": 2913, "h1_total_streams": 0,
                        "h2_backend_total_streams": 4012}
