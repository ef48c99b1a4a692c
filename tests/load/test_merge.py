"""Several load hosts' parts of one step merged into one result (capbench/load/drivers/merge.py), on real output of two
generators started at one instant (tests/load/data/README.md: the `*-pair-*` folders): the merged percentiles
are those of all their requests taken together, not the average of each generator's."""
from __future__ import annotations

import json
import math
import sqlite3
from dataclasses import replace
from pathlib import Path

import pytest

from capbench.engine.step import generator_problem
from capbench.load.drivers import Envelope, StepPlan
from capbench.load.drivers.latency import new_histogram, record_ms, unanswered_ages_ms
from capbench.load.drivers.merge import combine, shares
from capbench.load.drivers.oha import OhaDriver
from capbench.load.drivers.per_response import schedule_lags
from capbench.load.drivers.wrk2 import Wrk2Driver
from capbench.rundata.records import LoadHostUsage, StepRecord
from capbench.settings.bench import Slo

DATA = Path(__file__).parent / "data"
HOSTS = ["load", "load2"]
NAMED = (("p50", 50), ("p90", 90), ("p99", 99), ("p99.9", 99.9))


def part(driver, folder: str, plan: StepPlan, version: str):
    """One generator's part of the step, from its captured folder."""
    files = {p.name: p.read_bytes() for p in (DATA / folder).iterdir()}
    return driver.parse(files, plan, Envelope.parse(files["envelope"].decode()), version)


def share_plan(rate: float, duration: int, connections: int, ramp_s: float = 0.0, **files) -> StepPlan:
    return StepPlan(url="http://lb:8080/grind?variant=v1&level=13", rate=rate, duration_s=duration,
                    connections=connections, threads=1, timeout_s=10, users_file=files.get("users_file"),
                    urls_file=files.get("urls_file"), session_requests=10, ramp_s=ramp_s)


def pooled_percentiles(values_ms: list[float]) -> dict[str, float]:
    """The reference: every request of both generators recorded into one histogram."""
    histogram = new_histogram()
    for value in values_ms:
        record_ms(histogram, value)
    return {name: histogram.get_value_at_percentile(p) / 1000.0 for name, p in NAMED}


def oha_values(folder: str, plan: StepPlan) -> list[float]:
    """One oha generator's corrected latencies of the steady part, straight from its rows and schedule."""
    with sqlite3.connect(DATA / folder / "requests.db") as db:
        rows = db.execute("SELECT COALESCE(start_latency_correction, start), duration FROM oha").fetchall()
    lags = schedule_lags([stamp for stamp, _ in rows], 0, plan.rate)
    return [duration * 1000.0 + lag for (stamp, duration), lag in zip(rows, lags)
            if stamp - lag / 1000.0 >= plan.ramp_s]


def test_oha_parts_merge_to_the_percentiles_of_all_requests_together():
    plan = share_plan(150, 3, 8, ramp_s=0.6, urls_file="urls.txt")
    runs = [part(OhaDriver(), f"oha-pair-{host}", plan, "oha 1.16.0") for host in HOSTS]
    assert all(run.result.unanswered == 0 for run in runs)
    merged, _ = combine(HOSTS, runs, 300, start_at=runs[0].result.start_epoch)
    everything = oha_values("oha-pair-load", plan) + oha_values("oha-pair-load2", plan)
    reference = pooled_percentiles(everything)
    assert {name: merged.latency_ms[name] for name, _ in NAMED} == reference
    ordered = sorted(everything)  # the exact order statistic, which the histogram keeps to 3 digits
    assert merged.latency_ms["p99"] == pytest.approx(ordered[math.ceil(0.99 * len(ordered)) - 1], rel=2e-3)
    averaged = {name: sum(run.result.latency_ms[name] for run in runs) / 2 for name, _ in NAMED}
    assert averaged != reference and averaged["p99.9"] != reference["p99.9"]
    assert merged.latency_ms["max"] == max(run.result.latency_ms["max"] for run in runs)
    assert merged.responses == sum(run.result.responses for run in runs) == 900
    assert merged.achieved_rps == pytest.approx(300.0)
    assert merged.offered_rps == 300 and merged.connections == 16 and merged.intended == 900
    assert merged.behind_schedule == sum(run.result.behind_schedule for run in runs)
    assert sum(count for _, count, _ in merged.latency_by_second) == 900
    assert [g.host for g in merged.generators] == HOSTS
    assert [g.achieved_rps for g in merged.generators] == pytest.approx([150.0, 150.0])
    assert all(g.tool == "oha 1.16.0" and 0 <= g.start_skew_ms < 100 for g in merged.generators)


def wrk2_values(folder: str, plan: StepPlan, unanswered: int) -> list[float]:
    report = json.loads((DATA / folder / "wrk2.json").read_text())
    values = [us / 1000.0 for us, count in report["histogram_us"] for _ in range(count)]
    return values + unanswered_ages_ms(unanswered, plan.rate, plan.duration_s)


def test_wrk2_histograms_merge_to_the_percentiles_of_all_requests_together():
    plan = share_plan(150, 12, 8, users_file="users.txt")
    runs = [part(Wrk2Driver(), f"wrk2-pair-{host}", plan, "wrk 4.0.0") for host in HOSTS]
    merged, _ = combine(HOSTS, runs, 300)
    everything = [v for host, run in zip(HOSTS, runs) for v in wrk2_values(f"wrk2-pair-{host}", plan,
                                                                            run.result.unanswered)]
    reference = pooled_percentiles(everything)
    assert {name: merged.latency_ms[name] for name, _ in NAMED} == reference
    averaged = {name: sum(run.result.latency_ms[name] for run in runs) / 2 for name, _ in NAMED}
    assert averaged != reference
    assert merged.responses == sum(run.result.responses for run in runs)
    assert merged.unanswered == sum(run.result.unanswered for run in runs)
    assert merged.errors == {k: sum(run.result.errors[k] for run in runs) for k in merged.errors}
    assert [g.start_skew_ms for g in merged.generators] == [None, None]  # no instant given


def test_one_part_is_the_step_as_it_was():
    plan = share_plan(150, 3, 8, urls_file="urls.txt")
    run = part(OhaDriver(), "oha-pair-load", plan, "oha 1.16.0")
    merged, _ = combine(["load"], [run], 150)
    assert replace(merged, generators=[]) == run.result
    assert [g.host for g in merged.generators] == ["load"] and merged.generators[0].start_skew_ms is None


def test_an_older_wrk2_report_without_its_histogram_is_refused_for_a_merge():
    plan = share_plan(150, 12, 8)
    runs = [part(Wrk2Driver(), f"wrk2-pair-{host}", plan, "wrk 4.0.0") for host in HOSTS]
    runs[1] = replace(runs[1], book=None)
    with pytest.raises(Exception, match="no latency histogram from load2"):
        combine(HOSTS, runs, 300)


@pytest.mark.parametrize("rate, connections, whole, rates, conns", [
    (300, 16, False, [150, 150], [8, 8]),
    (362.5, 37, False, [181.25, 181.25], [19, 18]),
    (362.5, 37, True, [181, 181], [19, 18]),  # wrk2: whole shares of the rate rounded
    (363, 3, True, [121, 121, 121], [1, 1, 1]),
    (10, 2, False, [10 / 3] * 3, [1, 1, 1]),  # every host gets a connection
])
def test_shares_split_the_rate_and_the_connections(rate, connections, whole, rates, conns):
    plans = shares(share_plan(rate, 5, connections), len(rates), whole)
    assert [p.rate for p in plans] == pytest.approx(rates)
    assert [p.connections for p in plans] == conns
    assert {p.duration_s for p in plans} == {5}


def test_wrk2_gets_a_whole_rate_from_one_host_too():
    plan = shares(share_plan(362.5, 20, 37), 1, whole_rates=True)[0]
    assert plan.rate == 362 and "-R" in (argv := Wrk2Driver().argv(plan)) and argv[argv.index("-R") + 1] == "362"


def test_a_starved_generator_is_named_in_the_invalid_steps_reason():
    plan = share_plan(150, 3, 8, urls_file="urls.txt")
    runs = [part(OhaDriver(), f"oha-pair-{host}", plan, "oha 1.16.0") for host in HOSTS]
    starved = LoadHostUsage(cpu_seconds=0.12, wall_seconds=3.0, cpus_available=0.05, quota_periods=30,
                            throttled_periods=12)
    runs[1] = replace(runs[1], result=replace(runs[1].result, loadhost=starved))
    merged, _ = combine(HOSTS, runs, 300)
    reason = generator_problem(merged, Slo(failure_pct=1, p99_ms=500, achieved_pct=95))
    assert reason.startswith("load2: ") and "throttled it in 12 of 30 periods" in reason
    written = StepRecord("r", 1, "search", "cluster", 1, plan.url, "session", merged, False, reason, False,
                         []).to_json()
    assert [g["host"] for g in written["generators"]] == HOSTS
    assert written["generators"][1]["loadhost"]["throttled_pct"] == 40.0
