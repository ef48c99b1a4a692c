"""A step's client leg from the balancer's counters before and after it (capbench/load/client_leg.py): its
protocol said of the generator's requests, not of the health checks that come through the same frontend."""
from __future__ import annotations

from capbench.load import client_leg

BEFORE = {"conn_tot": 100, "req_tot": 1000, "ssl_sess": 10, "ssl_reused_sess": 2, "h1_total_connections": 90,
          "h1_total_streams": 990, "h2_total_connections": 10, "h2_backend_total_streams": 10}


def after(**more: int) -> dict[str, int]:
    return {name: value + more.get(name, 0) for name, value in BEFORE.items()}


def test_http2_over_tls_with_the_health_checks_beside_it():
    # A 3-s self-check step at 300/s over 30 connections (TLS=lb HTTP=2, 2026-12-06): 2 health checks beside it.
    leg = client_leg.figures(BEFORE, after(conn_tot=32, req_tot=902, ssl_sess=30, h1_total_connections=2,
                                           h1_total_streams=2, h2_total_connections=30, h2_backend_total_streams=900),
                             3.0, True, 900)
    assert leg["protocol"] == "h2" and leg["tls"] and leg["requests"] == 902
    assert leg["connections"] == 32 and leg["new_connections_per_s"] == 10.67
    assert leg["streams_per_h2_connection"] == 30.0
    assert leg["tls_handshakes"] == 30 and leg["tls_resumed"] == 0 and leg["tls_full_handshakes_per_s"] == 10.0


def test_http_1_1_in_clear_text_has_no_handshakes_to_count():
    leg = client_leg.figures(BEFORE, after(conn_tot=30, req_tot=600, h1_total_streams=600), 2.0, False, 600)
    assert leg["protocol"] == "http/1.1" and "tls_handshakes" not in leg and leg["streams_per_h2_connection"] is None


def test_resumed_handshakes_are_not_full_ones():
    leg = client_leg.figures(BEFORE, after(ssl_sess=50, ssl_reused_sess=40, h1_total_streams=10, req_tot=10),
                             10.0, True, 10)
    assert leg["tls_handshakes"] == 50 and leg["tls_resumed"] == 40 and leg["tls_full_handshakes_per_s"] == 1.0


def test_a_protocol_the_generator_mixed_is_said_mixed_and_a_step_without_requests_has_none():
    # 400 of the generator's 1000 requests over HTTP/1.1 (a connection that negotiated no h2): more than the
    # requests that were not the generator's.
    assert client_leg.protocol(402, 600, others=2) == "mixed"
    assert client_leg.protocol(2, 1000, others=2) == "h2" and client_leg.protocol(0, 0, others=0) is None
    assert client_leg.wanted("off", "1.1") is False and client_leg.wanted("lb", "1.1") and client_leg.wanted("off", "2")
    assert client_leg.wanted("off", "1.1", "per-request")  # the connections it opens are what it is about


def test_the_console_says_the_leg_at_capacity_in_one_line():
    from capbench.report.client_leg_words import client_leg_words
    leg = client_leg.figures(BEFORE, after(conn_tot=32, req_tot=902, ssl_sess=30, h1_total_streams=2,
                                           h2_total_connections=30, h2_backend_total_streams=900), 3.0, True, 900)
    assert client_leg_words(leg) == ("h2 over TLS, 32 connections (10.67 new/s), 30 streams per HTTP/2 connection, "
                                     "10 full handshakes/s (0 of 30 resumed)")
    clear = client_leg.figures(BEFORE, after(conn_tot=30, req_tot=600, h1_total_streams=600), 2.0, False, 600)
    assert client_leg_words(clear) == "http/1.1 in clear text, 30 connections (15 new/s)"


def test_a_balancer_that_does_not_answer_costs_the_step_its_client_leg_only(monkeypatch):
    from capbench.hosts import haproxy
    from capbench.hosts.backend import ClusterError

    def gone():
        raise ClusterError("the lb container is being re-created")
    monkeypatch.setattr(haproxy, "frontend_counters", lambda frontend="bench": gone())
    assert client_leg.read() is None


def test_tls_passed_through_counts_connections_alone_and_says_the_handshakes_are_the_nodes():
    # The TCP frontend's counters (TLS=node): connections only; HAProxy read no request and made no handshake.
    leg = client_leg.figures(BEFORE, after(conn_tot=300), 3.0, True, 300, passed=True)
    assert leg["connections"] == 300 and leg["new_connections_per_s"] == 100.0
    assert leg["tls_ended_at"] == "nodes" and leg["protocol"] is None and leg["requests"] is None
    assert leg["tls_handshakes"] is None and leg["tls_full_handshakes_per_s"] is None
    from capbench.report.client_leg_words import client_leg_words
    assert client_leg_words(leg) == ("TLS passed through to the nodes, 300 connections (100 new/s; their handshakes "
                                     "the nodes')")


def test_tls_passed_through_is_counted_on_the_tcp_frontend(monkeypatch):
    from capbench.hosts import balancer_address, haproxy
    asked = []
    monkeypatch.setattr(haproxy, "frontend_counters", lambda frontend="bench": asked.append(frontend) or {})
    monkeypatch.setattr(haproxy, "backend_counters", lambda: asked.append("nodes") or {})
    for where in ("node", "lb"):
        monkeypatch.setattr(balancer_address, "cluster_settings", lambda where=where: {"TLS": where})
        client_leg.read()
    assert asked == ["bench_passthrough", "bench", "nodes"]  # passed through, the balancer reads no request to a node


NODES_BEFORE = {"node.req_tot": 5000, "node.connect": 40, "node.reuse": 4960, "node.h1_total_streams": 0,
                "node.h2_backend_total_streams": 6000}


def test_the_leg_to_the_nodes_says_what_the_balancer_spoke_and_the_connections_it_opened():
    # A 5-s step at 200/s over 20 client connections, NODE_HTTP=2 in clear text (2026-12-07): 22 connections opened
    # to node1 for 1 000 requests; 50 health checks' streams beside them (one a check, each on its own connection).
    moved = {"req_tot": 1003, "h1_total_streams": 1003, "conn_tot": 23}
    before = BEFORE | NODES_BEFORE
    later = after(**moved) | {"node.req_tot": 6000, "node.connect": 62, "node.reuse": 5938,
                              "node.h1_total_streams": 0, "node.h2_backend_total_streams": 7050}
    leg = client_leg.figures(before, later, 5.0, False, 1000)
    assert leg["protocol"] == "http/1.1" and leg["node_leg"] == {
        "protocol": "h2", "requests": 1000, "connections_opened": 22, "new_connections_per_s": 4.4, "reused": 978,
        "requests_per_connection_opened": 45.5}
    from capbench.report.client_leg_words import client_leg_words
    assert client_leg_words(leg) == ("http/1.1 in clear text, 23 connections (4.6 new/s), to the nodes h2, 22 "
                                     "connections opened (4.4/s, 45.5 requests each)")
    # HTTP/1.1 to the nodes with a connection per request: none reused; and a step whose nodes got nothing.
    per_request = client_leg.node_leg({"req_tot": 300, "connect": 300, "h1_total_streams": 330}, lambda n: n / 3)
    assert per_request["protocol"] == "http/1.1" and per_request["requests_per_connection_opened"] == 1.0
    assert client_leg.node_leg({}, lambda n: None)["protocol"] is None
    assert client_leg.wanted("off", "1.1", "keep", "2") and not client_leg.wanted("off", "1.1", "keep", "1.1")
