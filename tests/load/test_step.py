"""The step verdict: the SLO conditions, and when the generator (not the server) was measured."""
from __future__ import annotations

from load.settings import Slo
from load.step import generator_problem, slo_failures
from rundata.records import LoadHostUsage, StepResult, Tool, empty_errors

SLO = Slo(failure_pct=1, p99_ms=500, achieved_pct=95)


def result(**changes) -> StepResult:
    base = dict(offered_rps=100.0, duration_s=20, connections=16, achieved_rps=100.0, responses=2000,
                latency_ms={"p50": 2.0, "p90": 4.0, "p99": 9.0, "p99.9": 20.0, "max": 30.0},
                errors=empty_errors(), error_messages={}, start_epoch=1.0, end_epoch=21.0,
                tool=Tool("oha", "oha 1.16.0", ["oha"]), intended=2000, sent=2000,
                loadhost=LoadHostUsage(cpu_seconds=2.0, wall_seconds=20.0, cpus_available=2.0),
                late_with_free_connection=0)
    return StepResult(**{**base, **changes})


def test_a_good_step_passes_and_is_valid():
    assert slo_failures(result(), SLO) == [] and generator_problem(result()) is None


def test_each_slo_condition():
    errors = {**empty_errors(), "status": 15, "slow": 10}
    assert slo_failures(result(errors=errors), SLO) == ["failures 1.25% > 1% (status 15, slow 10)"]
    assert slo_failures(result(latency_ms={"p99": 501.0}), SLO) == ["p99 501.0 ms > 500 ms"]
    assert slo_failures(result(achieved_rps=94.9), SLO) == ["achieved 94.9/s = 94.9% of offered < 95%"]
    assert slo_failures(result(achieved_rps=95.0, latency_ms={"p99": 500.0}), SLO) == []


def test_no_response_at_all_fails_every_condition():
    assert slo_failures(result(responses=0, latency_ms={}, achieved_rps=0.0), SLO) == [
        "failures 100.00% > 1% (no response at all)", "p99 None ms > 500 ms",
        "achieved 0.0/s = 0.0% of offered < 95%"]


def test_generator_cpu_saturated():
    busy = LoadHostUsage(cpu_seconds=36.0, wall_seconds=20.0, cpus_available=2.0)
    assert generator_problem(result(loadhost=busy)) == "load host CPU 90% of its 2 CPUs (limit 90%)"


def test_generator_late_although_a_connection_was_free():
    assert generator_problem(result(late_with_free_connection=100)) is None  # 5 %: at the bound
    assert "101 requests (5.0%) went out late although a connection was free" in generator_problem(
        result(late_with_free_connection=101))
