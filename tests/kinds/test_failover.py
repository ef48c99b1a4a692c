"""bench-failover's figures from HAProxy's request and state rings: detection, failures by kind and by when they
were accepted, recovery; the goals judged; its settings refused when bad."""
from __future__ import annotations

import pytest

from capbench.hosts import haproxy_log
from capbench.hosts.backend import Delay
from capbench.kinds import failover, read_settings
from capbench.settings.bench import SettingsError

T0 = 1_800_000_000.0


def req(accept: float, server: str, status: int = 200, term: str = "----", ta: int = 10, retries: str = "0") -> str:
    return f"2026-11-23T06:40:00.000000+00:00 capbench-req {T0 + accept:.3f} 0 0 {server} {status} {term} 0 0 5 {ta} {retries}"


def kill_scenario(failures_after_detection: int = 0) -> tuple[list[haproxy_log.Request], list[haproxy_log.StateChange]]:
    lines = []
    for i in range(100):  # 10 s at 10/s over node1 and node2
        t = i / 10
        down = 5.0 <= t < 9.0  # node1 dead or not yet back: HAProxy sends everything to node2
        lines.append(req(t, "node1" if i % 2 and not down else "node2", ta=50))
    lines += [req(4.95, "node1", 502, "SH--", 60), req(4.98, "node1", 502, "SH--", 30)]  # in flight at 5.0
    lines += [req(7.5 + i / 10, "node2", 503, "sQ--", 100) for i in range(failures_after_detection)]
    lines += [req(9.05, "node1", 200, "----", 40)]  # back after the restart at 8.5
    changes = [haproxy_log.StateChange(T0 + 5.8, "node1", "DOWN", ""), haproxy_log.StateChange(T0 + 8.9, "node1", "UP", "")]
    return haproxy_log.parse_requests("\n".join(lines)), changes


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
    # What summary.json keeps of it: its findings, every figure but the series (failover.json has them whole).
    found = failover.FailoverFindings()
    found.update({k: v for k, v in result.items() if k not in failover.SERIES})
    assert found.detection_s == result["detection_s"] and found.goals == result["goals"]
    assert failover.FailoverFindings.from_json(found.to_json()) == found


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


def test_a_slow_answer_from_the_node_back_in_rotation_is_its_returns_not_the_faults():
    # node1 UP again at 8.9 s; a JVM started anew takes 6 s over its first request at 9.1 s.
    requests, changes = kill_scenario()
    slow = haproxy_log.parse_requests(req(9.1, "node1", 200, "----", 6000))
    result = failover.analyze([*requests, *slow], changes, "node1", T0 + 5.0, T0 + 8.5, T0, T0 + 16)
    assert result["failed_by_when"] == {"before the fault": 2, "after its return": 1}
    assert result["failed_after_return_by_kind"] == {"HTTP 200, slower than 5 s (node1)": 1}
    assert result["failed_after_detection_by_kind"] == {}
    goals = result["goals"]
    assert not goals["no failure after its return"]
    assert goals["no failure accepted after detection"] and goals["failures no more than in flight at the fault"]


def test_a_request_sent_in_the_millisecond_of_the_down_event_was_sent_before_detection():
    # A freeze: node1 holds what it gets until the thaw. HAProxy's DOWN event at 5.7998 s and a request it stamped
    # 5.800 s (whole milliseconds) but dispatched in the same millisecond; one a millisecond later is after.
    lines = [req(5.2, "node1", 200, "----", 6000), req(5.8, "node1", 200, "----", 6000)]
    changes = [haproxy_log.StateChange(T0 + 5.7998, "node1", "DOWN", "")]
    result = failover.analyze(haproxy_log.parse_requests("\n".join(lines)), changes, "node1", T0 + 5.0, None, T0,
                              T0 + 12)
    assert result["failed_by_when"] == {"between the fault and its detection": 2}
    assert result["sent_to_node_before_detection"] == 2 and result["goals"]["no failure accepted after detection"]
    late = req(5.801, "node1", 200, "----", 6000)
    result = failover.analyze(haproxy_log.parse_requests("\n".join([*lines, late])), changes, "node1", T0 + 5.0,
                              None, T0, T0 + 12)
    assert result["failed_by_when"] == {"between the fault and its detection": 2, "after detection": 1}


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
        read_settings(environ=env)


def test_a_slowed_node_is_judged_by_its_failures_and_its_latency_by_phase():
    # FAULT=delay from 5.0 to 8.5 s: node1 answers throughout, 200 ms slower; no detection is expected.
    lines = [req(i / 10, "node1" if i % 2 else "node2", ta=250 if 50 <= i < 85 and i % 2 else 20) for i in range(100)]
    requests = haproxy_log.parse_requests("\n".join(lines))
    result = failover.analyze(requests, [], "node1", T0 + 5.0, T0 + 8.5, T0, T0 + 12, still_answers=True)
    assert result["goals"] == {"no failed request": True}
    assert result["node_p99_ms"] == {"before": 20, "during": 250, "after": 20}
    assert result["detection_s"] is None
    late = haproxy_log.parse_requests(req(6.0, "node1", 200, "----", 6000))
    assert failover.analyze([*requests, *late], [], "node1", T0 + 5.0, T0 + 8.5, T0, T0 + 12,
                            still_answers=True)["goals"] == {"no failed request": False}


def test_the_delay_s_figures_reach_the_backend_only_with_fault_delay():
    assert read_settings({"FAULT": "delay", "FAULT_DELAY_MS": "250", "FAULT_LOSS_PCT": "0.5"}).kinds[
        "failover"].delay() == Delay(250, 0.5)
    assert read_settings({"FAULT": "partition"}).kinds["failover"].delay() is None
