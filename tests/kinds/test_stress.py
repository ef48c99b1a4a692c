"""bench-stress's figures from HAProxy's request log: throughput while overloaded, failures by step and kind,
and the time to recover once the load fell (a simulated server, not a model of ours)."""
from __future__ import annotations

import pytest

from capbench.hosts import haproxy_log
from capbench.kinds import stress

T0 = 1_800_000_000.0
CAPACITY = 100.0
WINDOWS = {"before": (T0, T0 + 10), "overload": (T0 + 10, T0 + 30), "recovery": (T0 + 30, T0 + 60)}
RATES = {"before": 50.0, "overload": 200.0, "recovery": 50.0}


def line(accept: float, status: int = 200, term: str = "----", ta: int = 20) -> str:
    return f"x capbench-req {T0 + accept:.3f} 0 0 node1 {status} {term} 0 0 5 {ta} 0"


def simulated(backlog_s: int) -> list[haproxy_log.Request]:
    """A server that answers 100/s at most: 50/s fine; at 200/s it answers its 100 (slowly) and the rest wait in
    the queue until HAProxy gives up (503 sQ); after the drop the backlog takes `backlog_s` seconds to clear."""
    lines = []
    for second in range(60):
        phase_rate = 200 if 10 <= second < 30 else 50
        for i in range(phase_rate):
            t = second + i / phase_rate
            if 10 <= second < 30:
                lines.append(line(t, ta=2000) if i % 2 == 0 else line(t, 503, "sQ--", 1000))
            elif 30 <= second < 30 + backlog_s:
                lines.append(line(t, ta=1500))  # answered, but slower than the SLO
            else:
                lines.append(line(t))
    return haproxy_log.parse_requests("\n".join(lines))


def test_recovery_is_timed_from_the_drop_to_the_first_healthy_run_of_seconds():
    result = stress.analyze(simulated(backlog_s=7), WINDOWS, RATES, CAPACITY, p99_slo_ms=500)
    # The overload's failed and slow requests end by 32 s; the backlog's slow answers (1.5 s) are accepted until
    # 37 s and end by 38.5 s (seconds are counted by when a request ended): healthy from 39 s, 9 s after the drop.
    assert result["time_to_recover_s"] == 9
    assert result["drop_s"] == 30
    found = stress.StressFindings()  # what summary.json keeps: every figure but the per-second series
    found.update({**{k: v for k, v in result.items() if k != "per_second"}, "target": "cluster"})
    assert found.time_to_recover_s == 9 and stress.StressFindings.from_json(found.to_json()) == found


def test_overload_throughput_and_failures_are_counted_by_step_and_kind():
    result = stress.analyze(simulated(backlog_s=3), WINDOWS, RATES, CAPACITY, p99_slo_ms=500)
    assert result["failed_by_phase"] == {"before": 0, "overload": 2000, "recovery": 0}
    assert result["failed_by_kind"] == {"HTTP 503, server timeout while queued": 2000}
    assert 90 <= result["overload_answered_mean_rps"] <= 110
    assert result["overload_over_capacity"] == pytest.approx(result["overload_answered_mean_rps"] / CAPACITY, abs=0.01)
    assert result["phases_s"] == {"before": [0, 10], "overload": [10, 30], "recovery": [30, 60]}
    assert len(result["per_second"]) == 60


def test_the_summary_gives_the_generators_failures_beside_haproxys():
    # Requests a fixed population of users could not send yet wait at the generator, not in HAProxy.
    result = stress.analyze(simulated(backlog_s=0), WINDOWS, RATES, CAPACITY, p99_slo_ms=500)
    line = stress.summary_line({**result, "generator": {"overload": {"failures": 62181}}})
    assert f"HAProxy: {result['failed']} failed" in line and "the generator: 62181 failed in the overload step" in line


def test_a_server_that_never_recovers_is_said_so():
    result = stress.analyze(simulated(backlog_s=30), WINDOWS, RATES, CAPACITY, p99_slo_ms=500)
    assert result["time_to_recover_s"] is None
    assert "recovered not within the step" in stress.summary_line({**result, "target": "cluster", "generator": {}})


def test_a_dip_during_recovery_restarts_the_count():
    rows = [{"t": t, "ok": 50, "failed": 0, "p99_ms": 20} for t in range(40)]
    rows[33]["failed"] = 1  # one bad second after three good ones
    assert stress.recovery_time(rows, drop_s=30, low_rate=50, p99_slo_ms=500) == 4
