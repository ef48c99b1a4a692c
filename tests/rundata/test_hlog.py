"""A step's latency kept as an HdrHistogram interval log (capbench/rundata/hlog.py), from real captured output of both
tools (tests/load/data/): read back with hdrh's own HistogramLogReader, its untagged intervals give the step's
recorded percentiles, its ramp is tagged apart, and two load hosts' parts add up to the merged step."""
from __future__ import annotations

import json
from pathlib import Path

from hdrh.histogram import HdrHistogram
from hdrh.log import HistogramLogReader

from capbench.load.drivers import Envelope, StepPlan
from capbench.load.drivers.merge import combine
from capbench.load.drivers.oha import OhaDriver
from capbench.load.drivers.wrk2 import Wrk2Driver
from capbench.rundata import hlog
from capbench.rundata.layout import RunPaths

DATA = Path(__file__).parent.parent / "load" / "data"


def parsed(driver, folder: str, plan: StepPlan, version: str):
    files = {p.name: p.read_bytes() for p in (DATA / folder).iterdir()}
    return driver.parse(files, plan, Envelope.parse(files["envelope"].decode()), version)


def step_plan(rate, duration, connections, ramp_s=0.0, **files) -> StepPlan:
    return StepPlan(url="http://lb:8080/grind?variant=v1&level=13", rate=rate, duration_s=duration,
                    connections=connections, threads=2, timeout_s=10, users_file=files.get("users_file"),
                    urls_file=files.get("urls_file"), session_requests=10, ramp_s=ramp_s)


def intervals_as_hdrh_reads_them(path: Path) -> list[HdrHistogram]:
    reader = HistogramLogReader(str(path), HdrHistogram(1, 3_600_000_000, 3))
    found = []
    while (interval := reader.get_next_interval_histogram()) is not None:
        found.append(interval)
    reader.close()
    return found


def test_an_oha_steps_log_gives_back_its_recorded_p99_and_keeps_its_ramp_apart(tmp_path):
    run = parsed(OhaDriver(), "oha-pair-load", step_plan(150, 3, 8, ramp_s=0.6, urls_file="urls.txt"), "oha 1.16.0")
    path = RunPaths(tmp_path).hlog(7)
    hlog.write(path, run.result.start_epoch, run.book.intervals(), "a test step")
    assert path == tmp_path / "latency" / "step-007.hlog"
    intervals = intervals_as_hdrh_reads_them(path)
    measured = [i for i in intervals if i.get_tag() is None]
    assert len(measured) == 4 and [i.get_tag() for i in intervals].count("ramp") == 1  # the windows, the ramp
    whole = hlog.read(path)
    for name, percentile in (("p50", 50), ("p90", 90), ("p99", 99), ("p99.9", 99.9)):
        assert whole.get_value_at_percentile(percentile) / 1000.0 == run.result.latency_ms[name]
    assert whole.get_max_value() / 1000.0 == run.result.latency_ms["max"]
    assert hlog.read(path, "ramp").get_total_count() + whole.get_total_count() == run.result.responses
    assert abs(intervals[0].get_start_time_stamp() / 1000.0 - run.result.start_epoch) < 0.001  # absolute times


def test_a_wrk2_steps_log_is_its_whole_histogram_after_calibration(tmp_path):
    run = parsed(Wrk2Driver(), "wrk2-session-ok", step_plan(200, 12, 16, users_file="users.txt"), "wrk 4.0.0")
    path = tmp_path / "step.hlog"
    hlog.write(path, run.result.start_epoch, run.book.intervals(), "a test step")
    [interval] = intervals_as_hdrh_reads_them(path)  # no per-request times: one interval, no ramp counts
    assert interval.get_value_at_percentile(99) / 1000.0 == run.result.latency_ms["p99"]
    report = json.loads((DATA / "wrk2-session-ok" / "wrk2.json").read_text())
    assert interval.get_total_count() == report["latency_count"]  # the responses after its calibration


def test_two_hosts_parts_add_up_to_the_merged_steps_log(tmp_path):
    plan = step_plan(150, 3, 8, ramp_s=0.6, urls_file="urls.txt")
    runs = [parsed(OhaDriver(), f"oha-pair-{host}", plan, "oha 1.16.0") for host in ("load", "load2")]
    merged, book = combine(["load", "load2"], runs, 300)
    paths = RunPaths(tmp_path)
    hlog.write(paths.hlog(1), merged.start_epoch, book.intervals(), "merged")
    for host, run in zip(("load", "load2"), runs):
        hlog.write(paths.hlog(1, host), run.result.start_epoch, run.book.intervals(), host)
    added = hlog.read(paths.hlog(1, "load"))
    added.add(hlog.read(paths.hlog(1, "load2")))
    assert added.get_value_at_percentile(99) / 1000.0 == merged.latency_ms["p99"] == \
        hlog.read(paths.hlog(1)).get_value_at_percentile(99) / 1000.0
