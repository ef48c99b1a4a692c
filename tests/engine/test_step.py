"""The step verdict: the SLO conditions, and when the generator (not the server) was measured."""
from __future__ import annotations

from capbench.engine.step import generator_problem, judge, slo_failures
from capbench.rundata.records import LoadHostUsage, StepResult, Tool, empty_errors
from capbench.settings.bench import Slo

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
    assert slo_failures(result(), SLO) == [] and generator_problem(result(), SLO) is None


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
    assert generator_problem(result(loadhost=busy), SLO) == "load host CPU 90% of its 2 CPUs (limit 90%)"


def test_generator_held_back_by_its_cpu_quota():
    quota = LoadHostUsage(cpu_seconds=0.5, wall_seconds=20.0, cpus_available=0.1, quota_periods=200,
                          throttled_periods=3)
    assert generator_problem(result(loadhost=quota), SLO) == (
        "the load host's CPU quota (0.1 CPUs) throttled it in 3 of 200 periods (2%, limit 1%)")
    at_bound = LoadHostUsage(cpu_seconds=0.5, wall_seconds=20.0, cpus_available=0.1, quota_periods=200,
                             throttled_periods=2)
    assert generator_problem(result(loadhost=at_bound), SLO) is None


def test_a_failure_only_the_generators_lag_explains_is_invalid_and_others_stand():
    # p99 640 ms from the schedule, 180 ms without the generator's own lag: the generator decided the step.
    lagging = result(latency_ms={"p99": 640.0}, p99_without_generator_lag_ms=180.0, behind_schedule=300,
                     schedule_lag_ms_p99=460.0)
    assert generator_problem(lagging, SLO) == (
        "p99 640 ms > 500 ms only with the generator's own lag behind its schedule: without it 180 ms (300 of "
        "2000 requests handed out over 10 ms late, p99 460 ms)")
    record = judge("r", 1, "search", "cluster", 1, "u", "session", lagging, SLO)
    assert not record.valid and not record.passed
    # Over the bound without the lag too: the server's failure, whatever the generator did.
    overloaded = result(latency_ms={"p99": 2000.0}, p99_without_generator_lag_ms=1500.0, behind_schedule=300)
    record = judge("r", 2, "search", "cluster", 1, "u", "session", overloaded, SLO)
    assert record.valid and not record.passed and record.slo_broken == ["p99 2000.0 ms > 500 ms"]
    # Failed on more than the p99: the lag does not fail requests.
    with_errors = result(latency_ms={"p99": 640.0}, p99_without_generator_lag_ms=180.0,
                         errors={**empty_errors(), "read": 40})
    assert generator_problem(with_errors, SLO) is None
    # A pass with the lag in its latency passed all the more without it.
    passed = judge("r", 3, "search", "cluster", 1, "u", "session", result(behind_schedule=300), SLO)
    assert passed.valid and passed.passed


def test_a_step_whose_windows_disagree_on_the_p99_is_unsteady():
    def judged(windows):
        return judge("r", 1, "search", "node1", 1, "u", "session", result(window_p99_ms=windows), SLO)
    assert judged([120.0, 640.0, 90.0, 100.0]).unsteady  # one stall decided the step
    assert not judged([120.0, 140.0, 90.0, 100.0]).unsteady and not judged([700.0, 900.0, 800.0, 1200.0]).unsteady
    assert not judged([]).unsteady  # wrk2: no windows, no say
