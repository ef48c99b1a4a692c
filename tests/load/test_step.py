"""The step verdict: the SLO conditions, and when the generator (not the server) was measured."""
from __future__ import annotations

from load.settings import Slo
from load.step import generator_problem, judge, slo_failures
from rundata.records import LoadHostUsage, StepResult, Tool, empty_errors

SLO = Slo(failure_pct=1, p99_ms=500, achieved_pct=95)


def result(**changes) -> StepResult:
    base = dict(offered_rps=100.0, duration_s=20, connections=16, achieved_rps=100.0, responses=2000,
                latency_ms={"p50": 2.0, "p90": 4.0, "p99": 9.0, "p99.9": 20.0, "max": 30.0},
                errors=empty_errors(), error_messages={}, start_epoch=1.0, end_epoch=21.0,
                tool=Tool("oha", "oha 1.16.0", ["oha"]), intended=2000, sent=2000,
                loadhost=LoadHostUsage(cpu_seconds=2.0, wall_seconds=20.0, cpus_available=2.0),
                behind_schedule=0, schedule_lag_ms_p99=1.0)
    return StepResult(**{**base, **changes})


def test_a_good_step_passes_and_is_valid():
    assert slo_failures(result(), SLO) == [] and generator_problem(result(), passed=True) is None


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
    assert generator_problem(result(loadhost=busy), passed=True) == "load host CPU 90% of its 2 CPUs (limit 90%)"
    assert generator_problem(result(loadhost=busy), passed=False) is not None  # whatever the SLO said


def test_generator_held_back_by_its_cpu_quota():
    quota = LoadHostUsage(cpu_seconds=0.5, wall_seconds=20.0, cpus_available=0.1, quota_periods=200,
                          throttled_periods=3)
    assert generator_problem(result(loadhost=quota), passed=False) == (
        "the load host's CPU quota (0.1 CPUs) throttled it in 3 of 200 periods (2%, limit 1%)")
    at_bound = LoadHostUsage(cpu_seconds=0.5, wall_seconds=20.0, cpus_available=0.1, quota_periods=200,
                             throttled_periods=2)
    assert generator_problem(result(loadhost=at_bound), passed=True) is None


def test_generator_behind_its_own_schedule_invalidates_a_pass_only():
    # 1 % of 2000 is the bound; above it a pass is not the server's (oha's latency runs from its own late
    # stamps, so its lag can only flatter the server): a failure stands.
    assert generator_problem(result(behind_schedule=20), passed=True) is None
    late = result(behind_schedule=21, schedule_lag_ms_p99=164.0)
    assert generator_problem(late, passed=True) == (
        "the generator sent 21 of 2000 requests (1.1%, limit 1%) behind its own schedule (p99 164 ms late)")
    assert generator_problem(late, passed=False) is None


def test_judge_calls_a_pass_with_the_generator_behind_invalid_and_keeps_a_failure():
    slow = result(behind_schedule=300, latency_ms={"p99": 900.0})
    failed = judge("r", 1, "search", "cluster", 1, "u", "session", slow, SLO)
    assert failed.valid and not failed.passed and failed.slo_broken == ["p99 900.0 ms > 500 ms"]
    passed = judge("r", 2, "search", "cluster", 1, "u", "session", result(behind_schedule=300), SLO)
    assert not passed.valid and not passed.passed and "behind its own schedule" in passed.invalid_reason
