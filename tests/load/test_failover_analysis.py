"""HAProxy's rings read (lines in the formats HAProxy 2.6 wrote on our lb) and the failover's figures from
them: detection, failures by kind and by when they were accepted, recovery; the goals judged."""
from __future__ import annotations

import pytest

from load import failover, lblog
from load.settings import SettingsError, load_settings

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
    changes = lblog.parse_events(EVENTS)
    assert [(c.server, c.state) for c in changes] == [
        ("node1", "DOWN"), ("node1", "MAINT"), ("node1", "READY"), ("node2", "MAINT"), ("node1", "UP")]
    assert changes[1].at - changes[0].at == pytest.approx(8.918809)


def test_request_lines_are_read_and_failures_named():
    text = "\n".join([req(1.0, "node1"), req(2.0, "node1", 502, "SH--", 3), req(3.0, "<NOSRV>", 503, "SC--", 0),
                      req(4.0, "node2", 200, "----", 12, "+1"), "2026-11-23T06:40:00+00:00 some other line"])
    requests = lblog.parse_requests(text)
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
    first, second, third = lblog.parse_requests("\n".join(lines))
    assert second.received - first.received == pytest.approx(1.5)
    assert third.received == pytest.approx(1795428313.965 + 1.504)
    assert third.end == pytest.approx(third.received + 0.004)


def test_an_answer_slower_than_5_s_counts_as_failed_as_in_the_study():
    slow, fast = lblog.parse_requests("\n".join([req(1.0, "node1", 200, "----", 5001), req(2.0, "node1", 200, "----", 4999)]))
    assert slow.failed and slow.kind == "HTTP 200, slower than 5 s"
    assert not fast.failed


def test_a_client_that_gave_up_counts_as_failed_even_with_a_status():
    (request,) = lblog.parse_requests(req(1.0, "node1", 200, "CD--", 3000))
    assert request.failed and request.kind == "HTTP 200, client aborted while receiving the response"


def kill_scenario(failures_after_detection: int = 0) -> tuple[list[lblog.Request], list[lblog.StateChange]]:
    lines = []
    for i in range(100):  # 10 s at 10/s over node1 and node2
        t = i / 10
        down = 5.0 <= t < 9.0  # node1 dead or not yet back: HAProxy sends everything to node2
        lines.append(req(t, "node1" if i % 2 and not down else "node2", ta=50))
    lines += [req(4.95, "node1", 502, "SH--", 60), req(4.98, "node1", 502, "SH--", 30)]  # in flight at 5.0
    lines += [req(7.5 + i / 10, "node2", 503, "sQ--", 100) for i in range(failures_after_detection)]
    lines += [req(9.05, "node1", 200, "----", 40)]  # back after the restart at 8.5
    changes = [lblog.StateChange(T0 + 5.8, "node1", "DOWN", ""), lblog.StateChange(T0 + 8.9, "node1", "UP", "")]
    return lblog.parse_requests("\n".join(lines)), changes


def test_failover_figures_from_a_kill():
    requests, changes = kill_scenario()
    result = failover.analyze(requests, changes, "node1", T0 + 5.0, T0 + 8.5, T0, T0 + 12)
    assert result["detection_s"] == pytest.approx(0.8)
    assert result["in_flight_at_fault"] == 2 and result["failed"] == 2
    assert result["failed_by_when"] == {"before the fault": 2}
    assert result["failed_by_kind"] == {
        "HTTP 502, server aborted or refused while waiting for the response headers (node1)": 2}
    assert result["time_to_up_s"] == pytest.approx(0.4)
    assert result["time_to_traffic_s"] == pytest.approx(0.59)
    assert all(result["goals"].values()), result["goals"]
    seconds = result["per_second"]
    assert len(seconds) == 12 and sum(s["failed"] for s in seconds) == 2
    assert seconds[5]["failed"] == 2 and seconds[5]["p99_ms"] == 50


def test_requests_haproxy_closed_without_a_log_line_count_as_failed_and_in_flight():
    # A kill with 3 requests in flight on kept-alive connections: HAProxy closes them unanswered and unlogged;
    # the generator counts 3 read errors.
    requests, changes = kill_scenario()
    result = failover.analyze(requests, changes, "node1", T0 + 5.0, T0 + 8.5, T0, T0 + 12, unlogged=3)
    assert result["failed"] == 5 and result["in_flight_at_fault"] == 5 and result["closed_unlogged"] == 3
    assert result["failed_by_when"] == {"before the fault": 2, "in flight when its node's connection broke": 3}
    assert result["failed_by_kind"][failover.UNLOGGED_KIND] == 3
    assert all(result["goals"].values()), result["goals"]


def test_failures_after_detection_break_the_goals():
    requests, changes = kill_scenario(failures_after_detection=3)
    result = failover.analyze(requests, changes, "node1", T0 + 5.0, T0 + 8.5, T0, T0 + 12)
    assert result["failed_by_when"] == {"before the fault": 2, "after detection": 3}
    assert not result["goals"]["no failure accepted after detection"]
    assert not result["goals"]["failures no more than in flight at the fault"]
    assert result["goals"]["detection within 2 s"]


def test_a_fault_never_detected_is_said_and_fails_its_goals():
    requests, _ = kill_scenario()
    result = failover.analyze(requests, [], "node1", T0 + 5.0, T0 + 8.5, T0, T0 + 12)
    assert result["detection_s"] is None and result["time_to_up_s"] is None
    assert not result["goals"]["detection within 2 s"]
    assert not result["goals"]["no failure accepted after detection"]
    assert "detected in never" in failover.summary_line({**result, "fault": "kill", "node": "node1"})


@pytest.mark.parametrize("env, message", [
    ({"FAULT": "explode"}, "FAULT='explode' is not allowed: use one of kill, freeze"),
    ({"FAULT_NODE": "node4"}, "FAULT_NODE='node4' is not allowed: use one of node1, node2, node3"),
    ({"FAULT_AT_S": "2"}, "FAULT_AT_S='2' is not allowed: use an integer from 5 to 3600"),
    ({"FAULT_AT_S": "60", "FAULT_FOR_S": "40"}, "FAILOVER_S='90' is not allowed: use more than FAULT_AT_S"),
    ({"FAILOVER_RATE": "-3"}, "FAILOVER_RATE='-3' is not allowed: use auto or a number above 0"),
])
def test_bad_failover_settings_are_refused(env, message):
    with pytest.raises(SettingsError, match=message.replace("(", r"\(").replace("+", r"\+")):
        load_settings(environ=env)


def test_a_lasting_outage_flags_the_steps_and_a_short_flap_does_not():
    from load.bench import disturbances
    steps = [{"label": "node3", "target": "node3", "start_epoch": T0, "end_epoch": T0 + 60},
             {"label": "cluster", "target": "cluster", "start_epoch": T0 + 100, "end_epoch": T0 + 200}]
    events = [{"node": "node3", "state": "DOWN", "epoch": T0 + 10}, {"node": "node3", "state": "UP", "epoch": T0 + 13},
              {"node": "node2", "state": "DOWN", "epoch": T0 + 150}]
    outages, flaps = disturbances(steps, events, until=T0 + 300)
    assert flaps == {"node3": 1}
    assert list(outages) == ["cluster"] and "node2 went DOWN at" in outages["cluster"][0]
    assert outages["cluster"][0].endswith("for 150 s")
