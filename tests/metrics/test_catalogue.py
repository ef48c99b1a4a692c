"""Figures of the catalogue that the golden export cannot show (its archives predate them)."""
from __future__ import annotations

import pytest

from capbench.metrics.catalogue import NODE, Window


def figure(name: str, series) -> float | None:
    return next(f for f in NODE if f.name == name).of(Window(series, cpu_quota=0.4))


def test_throttling_is_the_windows_growth_of_pcps_cumulative_counts():
    # PCP gives cgroup v1's nr_periods and nr_throttled as instant values: the totals since the node started
    # (here 1000 periods, 50 throttled, before the window). Over the window 40 periods went by, 10 throttled.
    series = {("cgroup.cpusched.periods", "/"): [1000.0, 1010.0, 1020.0, 1030.0, 1040.0],
              ("cgroup.cpusched.throttled", "/"): [50.0, 52.0, 55.0, 58.0, 60.0],
              ("cgroup.cpusched.throttled_time", "/"): [2e6, 4e6, 6e6, 8e6, 10e6]}  # a counter: ns per second
    assert figure("throttled_pct", series) == 25.0
    assert figure("throttled_ms_per_s", series) == pytest.approx(6.0)


def test_without_the_metrics_or_a_second_sample_there_is_no_figure():
    assert figure("throttled_pct", {}) is None
    assert figure("throttled_pct", {("cgroup.cpusched.periods", "/"): [1000.0],
                                    ("cgroup.cpusched.throttled", "/"): [50.0]}) is None


def test_cpu_per_request_is_the_jvms_cpu_over_the_requests_it_served():
    # pmrep gives both counters as rates: 0.45 CPU-seconds per second over 800 requests per second.
    om = "openmetrics.jvm."
    series = {(om + "process_cpu_seconds_total", ""): [0.44, 0.46],
              (om + "tomcat_requests_requestcount_total", "connector:http-nio-8080"): [790.0, 810.0]}
    assert figure("cpu_ms_per_request", series) == 0.562  # rounded to 3 decimals
    assert figure("cpu_ms_per_request", {(om + "process_cpu_seconds_total", ""): [0.4]}) is None


def test_an_applications_requests_are_its_modules_servlets_and_the_grinder_beside_it_is_not_counted():
    # With APP_WAR the Grinder sits at /capbench; both modules have Tomcat's default and jsp servlets.
    om = "openmetrics.jvm.tomcat_servlet_requestcount_total"
    series = {(om, "0 module:/ servlet:default"): [100.0, 120.0],
              (om, "1 module:/ servlet:jsp"): [200.0, 220.0],
              (om, "2 module:/capbench servlet:health"): [3.3, 3.3],
              (om, "3 module:/capbench servlet:default"): [1.0, 1.0]}
    assert figure("app_requests_per_s", series) == 320.0
    # The Grinder alone at / : no application figure; its workload servlets are what served the bench.
    grinder = {(om, "0 module:/ servlet:grind"): [400.0, 400.0], (om, "1 module:/ servlet:health"): [3.3, 3.3]}
    assert figure("app_requests_per_s", grinder) is None
    assert figure("grind_requests_per_s", grinder) == 400.0
