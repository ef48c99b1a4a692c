"""The handshakes' share of the CPU of each host that ended TLS at a capacity (capbench/analysis/tls_share.py):
priced by the run's probe, counted from the step's legs, shared among the nodes by their requests; TLS-bound at
half of a host's CPU or more."""
from __future__ import annotations

from capbench.analysis import hints, tls_share


def node(requests_per_s: float | None, pct: float, quota: float = 0.5) -> dict:
    """A serving node's figures; requests_per_s None: Tomcat's count missing (shared evenly then)."""
    return {"grind_requests_per_s": requests_per_s or 1.0, "requests_per_s": requests_per_s,
            "cpu_pct_of_quota": pct, "cpu_quota": quota}


COST = {"lb": {"cpu_ms_per_handshake": 0.4}, "node1": {"cpu_ms_per_handshake": 2.0},
        "node2": {"cpu_ms_per_handshake": 2.0}}


def test_the_balancers_full_handshakes_priced_against_haproxys_cores():
    leg = {"tls": True, "tls_full_handshakes_per_s": 500.0, "new_connections_per_s": 500.0}
    metrics = {"lb": {"haproxy_cpu_cores": 0.25}, "node1": node(500, 80)}
    share = tls_share.at_capacity(COST, leg, metrics)
    assert share["hosts"]["lb"]["share_pct"] == 80.0  # 500/s x 0.4 ms = 0.2 core of 0.25
    assert share["tls_bound"] == ["lb"] and share["sentence"].startswith("lb's handshakes took 80 % of its CPU")
    hint = hints.tls_hint(share)
    assert hint.kind == "tls" and hint.host == "lb" and hint.text.startswith("TLS-bound — lb's handshakes")
    assert hint.figures["lb share_pct"] == 80.0


def test_passed_through_connections_are_shared_among_the_nodes_by_their_requests():
    leg = {"tls": True, "tls_ended_at": "nodes", "new_connections_per_s": 90.0, "tls_full_handshakes_per_s": None}
    metrics = {"lb": {"haproxy_cpu_cores": 0.05}, "node1": node(200, 90), "node2": node(100, 40)}
    share = tls_share.at_capacity(COST, leg, metrics)
    assert set(share["hosts"]) == {"node1", "node2"}  # the balancer ended none of them
    one, two = share["hosts"]["node1"], share["hosts"]["node2"]
    assert (one["full_handshakes_per_s"], two["full_handshakes_per_s"]) == (60.0, 30.0)
    assert one["share_pct"] == 26.7 and two["share_pct"] == 30.0  # 60 x 2 ms of 0.45 core; 30 x 2 of 0.2
    assert share["tls_bound"] == [] and hints.tls_hint(share) is None


def test_re_encrypted_connections_are_the_balancers_to_the_nodes():
    leg = {"tls": True, "tls_full_handshakes_per_s": 2.0,
           "node_leg": {"new_connections_per_s": 120.0, "requests": 3000}}
    metrics = {"lb": {"haproxy_cpu_cores": 0.3}, "node1": node(None, 60)}
    share = tls_share.at_capacity(COST, leg, metrics)
    assert share["hosts"]["node1"]["full_handshakes_per_s"] == 120.0
    assert share["hosts"]["node1"]["share_pct"] == 80.0 and share["tls_bound"] == ["node1"]
    assert share["hosts"]["lb"]["share_pct"] == 0.3


def test_nothing_without_a_price_a_leg_or_host_figures():
    leg = {"tls": True, "tls_full_handshakes_per_s": 500.0}
    metrics = {"lb": {"haproxy_cpu_cores": 0.25}}
    assert tls_share.at_capacity(None, leg, metrics) is None
    assert tls_share.at_capacity(COST, None, metrics) is None
    assert tls_share.at_capacity(COST, leg, None) is None
    assert tls_share.at_capacity({"lb": {"cpu_ms_per_handshake": None}}, leg, metrics) is None
    assert tls_share.at_capacity(COST, {"tls": False, "new_connections_per_s": 9.0}, metrics) is None
