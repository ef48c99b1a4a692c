"""HAProxy's rings read back: its state changes and our request lines, in the formats HAProxy 2.6 wrote on our lb
(capbench/hosts/haproxy_log.py)."""
from __future__ import annotations

import pytest

from capbench.hosts import haproxy_log

# What `show events events` printed on our lb image (a node failing its checks, put in and out of maintenance).
EVENTS = """\
2026-11-23T06:36:53.623397+00:00 Server nodes/node1 is DOWN, reason: Layer7 invalid response, check duration: 5ms. 0 active and 0 backup servers left. 0 sessions active, 0 requeued, 0 remaining in queue.
2026-11-23T06:36:53.623409+00:00 backend nodes has no server available!
2026-11-23T06:37:02.542206+00:00 Server nodes/node1 was DOWN and now enters maintenance.
2026-11-23T06:37:03.658001+00:00 Server nodes/node1 is UP/READY (leaving forced maintenance).
2026-11-23T06:37:05.100000+00:00 Server nodes/node2 is going DOWN for maintenance. 1 active and 0 backup servers left. 0 sessions active, 0 requeued, 0 remaining in queue.
2026-11-23T06:37:09.250000+00:00 Server nodes/node1 is UP, reason: Layer7 check passed, code: 200, check duration: 2ms. 1 active and 0 backup servers online. 0 sessions requeued, 0 total in queue.
"""
T0 = 1_800_000_000.0


def req(accept: float, server: str, status: int = 200, term: str = "----", ta: int = 10, retries: str = "0") -> str:
    return f"2026-11-23T06:40:00.000000+00:00 capbench-req {T0 + accept:.3f} 0 0 {server} {status} {term} 0 0 5 {ta} {retries}"


def test_state_changes_are_read_with_their_times():
    changes = haproxy_log.parse_events(EVENTS)
    assert [(c.server, c.state) for c in changes] == [
        ("node1", "DOWN"), ("node1", "MAINT"), ("node1", "READY"), ("node2", "MAINT"), ("node1", "UP")]
    assert changes[1].at - changes[0].at == pytest.approx(8.918809)


# Our lb on the swarm lab when node1's task was killed and a new one started: the name vanished from DNS with
# the task (maintenance), then resolved again at a new address.
SWARM_EVENTS = """\
2026-11-24T07:35:10.218968+00:00 Server nodes/node1 is DOWN, reason: Layer4 timeout, check duration: 301ms. 2 active and 0 backup servers left. 62 sessions active, 0 requeued, 0 remaining in queue.
2026-11-24T07:35:39.532364+00:00 Server nodes/node1 was DOWN and now enters maintenance (unspecified DNS error).
2026-11-24T07:35:59.547846+00:00 nodes/node1 changed its IP from (none) to 10.89.4.13 by bench_dns/127.0.0.11.
2026-11-24T07:35:59.547863+00:00 Server nodes/node1 ('node1') is UP/READY (resolves again).
2026-11-24T07:35:59.547870+00:00 Server nodes/node1 administratively READY thanks to valid DNS answer.
"""


def test_a_server_found_again_by_dns_is_read_as_ready():
    changes = haproxy_log.parse_events(SWARM_EVENTS)
    assert [(c.server, c.state) for c in changes] == [("node1", "DOWN"), ("node1", "MAINT"), ("node1", "READY")]
    assert changes[2].at - changes[0].at == pytest.approx(49.328895)


def test_request_lines_are_read_and_failures_named():
    text = "\n".join([req(1.0, "node1"), req(2.0, "node1", 502, "SH--", 3), req(3.0, "<NOSRV>", 503, "SC--", 0),
                      req(4.0, "node2", 200, "----", 12, "+1"), "2026-11-23T06:40:00+00:00 some other line"])
    requests = haproxy_log.parse_requests(text)
    assert [r.failed for r in requests] == [False, True, True, False]
    assert requests[1].kind == "HTTP 502, server aborted or refused while waiting for the response headers"
    assert requests[2].kind == "HTTP 503, server aborted or refused while connecting to the server"
    assert requests[3].redispatched and requests[3].retries == 1
    assert requests[1].end == pytest.approx(T0 + 2.003)


def test_a_request_on_a_kept_alive_connection_is_timed_from_its_own_first_byte():
    # What HAProxy 2.6 wrote for three requests 1.5 s apart on one connection: %Ts is when the connection
    # was accepted, then when the previous request ended; %Ti (1500) the idle time between.
    lines = ["capbench-req 1795428312.464 0 0 node1 200 ---- 0 0 0 0 0",
             "capbench-req 1795428312.464 0 1500 node1 200 ---- 0 0 0 0 0",
             "capbench-req 1795428313.965 2 1502 node1 200 ---- 0 0 3 4 0"]
    first, second, third = haproxy_log.parse_requests("\n".join(lines))
    assert second.received - first.received == pytest.approx(1.5)
    assert third.received == pytest.approx(1795428313.965 + 1.504)
    assert third.end == pytest.approx(third.received + 0.004)


def test_an_answer_slower_than_5_s_counts_as_failed_as_in_the_study():
    slow, fast = haproxy_log.parse_requests("\n".join([req(1.0, "node1", 200, "----", 5001), req(2.0, "node1", 200, "----", 4999)]))
    assert slow.failed and slow.kind == "HTTP 200, slower than 5 s"
    assert not fast.failed


def test_a_client_that_gave_up_counts_as_failed_even_with_a_status():
    (request,) = haproxy_log.parse_requests(req(1.0, "node1", 200, "CD--", 3000))
    assert request.failed and request.kind == "HTTP 200, client aborted while receiving the response"
