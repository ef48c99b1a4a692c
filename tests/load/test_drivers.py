"""The drivers' parsers against real output captured from each tool (tests/load/data/README.md says how)."""
from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from load.drivers import DriverError, Envelope, StepPlan
from load.drivers.oha import OhaDriver, classify_error, late_with_free_connection
from load.drivers.wrk2 import Wrk2Driver, thread_count
from rundata.records import SPECTRUM_PERCENTILES

DATA = Path(__file__).parent / "data"


def files_of(folder: str) -> tuple[dict[str, bytes], Envelope]:
    files = {p.name: p.read_bytes() for p in (DATA / folder).iterdir()}
    return files, Envelope.parse(files["envelope"].decode())


def plan(rate: float, duration: int, connections: int, url: str = "http://lb:8080/grind?variant=v1&level=13",
         urls_file: str | None = None, users_file: str | None = None) -> StepPlan:
    return StepPlan(url=url, rate=rate, duration_s=duration, connections=connections, threads=2, timeout_s=10,
                    users_file=users_file, urls_file=urls_file, session_requests=10)


def assert_complete(result) -> None:
    """Every field a step record promises is there, and the percentiles are ordered."""
    assert set(result.errors) == {"connect", "read", "write", "timeout", "status", "slow", "other"}
    assert result.start_epoch < result.end_epoch
    assert result.tool.name and result.tool.version and result.tool.argv
    if result.responses:
        values = [result.latency_ms[k] for k in ("p50", "p90", "p99", "p99.9", "max")]
        assert values == sorted(values) or values[-2] <= values[-1] * 1.001  # HDR rounds p99.9 up to its bucket


def assert_spectrum(result) -> None:
    """The percentile spectrum runs over SPECTRUM_PERCENTILES to 100 = max, rising, through the named ones."""
    spectrum = dict((p, v) for p, v in result.latency_spectrum_ms)
    assert list(spectrum) == [*SPECTRUM_PERCENTILES, 100]
    values = list(spectrum.values())
    assert all(a <= b * 1.001 for a, b in zip(values, values[1:]))
    assert spectrum[50] == result.latency_ms["p50"] and spectrum[99] == result.latency_ms["p99"]
    assert spectrum[100] == result.latency_ms["max"]


def test_oha_session_step():
    files, envelope = files_of("oha-session-ok")
    result = OhaDriver().parse(files, plan(200, 3, 16, urls_file="urls.txt"), envelope, "oha 1.16.0")
    assert_complete(result)
    assert result.responses == 600
    assert result.achieved_rps == pytest.approx(200.0)
    assert result.failures == 0 and result.failure_pct == 0
    assert result.intended == 600 and result.sent == 600
    assert result.late_with_free_connection == 0
    assert_spectrum(result)
    # Our HdrHistogram percentiles agree with oha's own ones (which take the next sample up) within 1 %.
    own = json.loads(files["oha.json"])["latencyPercentiles"]
    assert result.latency_ms["p50"] == pytest.approx(own["p50"] * 1000, rel=0.01)
    assert result.latency_ms["p99"] == pytest.approx(own["p99"] * 1000, rel=0.03)
    assert result.loadhost.cpus_available == 2 and 0 < result.loadhost.cpu_pct < 50
    assert "--latency-correction" in result.tool.argv and "--urls-from-file" in result.tool.argv


def test_oha_session_draws_many_users(tmp_path):
    db = tmp_path / "requests.db"
    db.write_bytes((DATA / "oha-session-ok" / "requests.db").read_bytes())
    with sqlite3.connect(db) as conn:
        users = {row[0].split("user=")[1] for row in conn.execute("SELECT url FROM oha")}
    assert len(users) > 90  # 600 draws from 100 users


def test_oha_status_errors():
    files, envelope = files_of("oha-status-400")
    result = OhaDriver().parse(files, plan(50, 2, 4), envelope, "oha 1.16.0")
    assert_complete(result)
    assert result.responses == 100 and result.errors["status"] == 100
    assert result.failure_pct == 100


def test_oha_connection_refused():
    files, envelope = files_of("oha-refused")
    result = OhaDriver().parse(files, plan(50, 2, 4), envelope, "oha 1.16.0")
    assert result.responses == 0 and result.latency_ms == {}
    assert result.errors["connect"] == 100 and result.failure_pct == 100
    assert result.achieved_rps == 0


def test_oha_timeouts_and_requests_cut_at_the_end():
    files, envelope = files_of("oha-timeout")
    result = OhaDriver().parse(files, plan(20, 3, 4), envelope, "oha 1.16.0")
    assert result.errors["timeout"] == 8
    assert result.failures == 8  # the 4 cut by the deadline are neither answered nor failed
    assert result.sent == 8 and "4 connections cut" in result.notes[0]


@pytest.mark.parametrize("message, kind", [
    ("Connection refused (os error 111)", "connect"),
    ("timeout", "timeout"),
    ("connection error: Connection reset by peer (os error 104)", "read"),
    ("connection closed before message completed", "read"),
    ("Broken pipe (os error 32)", "write"),
    ("No route to host (os error 113)", "connect"),
    ("something new", "other"),
])
def test_oha_error_messages_map_to_the_study_kinds(message, kind):
    assert classify_error(message) == kind


def test_late_request_with_a_free_connection_is_the_generators_fault():
    # (due, sent, end, corrected, status): one connection busy 0..1 s; a request due at 0.5 s sent at 0.6 s.
    rows = [(0.0, 0.0, 1.0, 1.0, 200), (0.5, 0.6, 0.7, 0.2, 200)]
    assert late_with_free_connection(rows, connections=2, in_flight_at_end=0) == 1  # a 2nd connection was free
    assert late_with_free_connection(rows, connections=1, in_flight_at_end=0) == 0  # it waited for the only one
    assert late_with_free_connection(rows, connections=2, in_flight_at_end=1) == 0  # a cut request held it


def test_oha_without_results_is_an_error():
    files, envelope = files_of("oha-refused")
    with pytest.raises(DriverError, match="oha exited 0 and left no results"):
        OhaDriver().parse({"envelope": files["envelope"]}, plan(50, 2, 4), envelope, "oha 1.16.0")


def test_wrk2_session_step():
    files, envelope = files_of("wrk2-session-ok")
    result = Wrk2Driver().parse(files, plan(200, 12, 16, users_file="users.txt"), envelope, "wrk 4.0.0")
    assert_complete(result)
    assert result.responses == 2402
    assert result.achieved_rps == pytest.approx(2402 / 12.004861, abs=0.01)
    assert result.latency_ms["p99"] == pytest.approx(9.663)
    assert result.failures == 0
    assert result.tool.argv[-3:] == ["--", "users.txt", "10"]


def test_wrk2_status_errors():
    files, envelope = files_of("wrk2-status-400")
    result = Wrk2Driver().parse(files, plan(50, 12, 4), envelope, "wrk 4.0.0")
    assert result.errors["status"] == 601 and result.failure_pct == 100


def test_wrk2_that_could_not_connect_is_an_error_with_its_message():
    files, envelope = files_of("wrk2-refused")
    with pytest.raises(DriverError, match="wrk2 exited 1 .*unable to connect to lb:9999"):
        Wrk2Driver().parse(files, plan(50, 12, 4), envelope, "wrk 4.0.0")


@pytest.mark.parametrize("wanted, connections, rate, expected", [
    (2, 16, 200, 2), (4, 2, 200, 2), (2, 16, 1.5, 1), (8, 100, 0.5, 1), (1, 1, 1, 1)])
def test_wrk2_threads_never_exceed_connections_nor_go_below_one_request_per_second(
        wanted, connections, rate, expected):
    assert thread_count(wanted, connections, rate) == expected
    argv = Wrk2Driver().argv(plan(rate, 20, connections))
    assert argv[argv.index("-t") + 1] == str(expected) and argv[argv.index("-R") + 1] == f"{rate:g}"


def test_oha_closed_loop_has_no_rate_and_no_correction():
    argv = OhaDriver().argv(plan(0, 20, 8))
    assert "-q" not in argv and "--latency-correction" not in argv
    assert argv[argv.index("-c") + 1] == "8" and argv[argv.index("-z") + 1] == "20s"
    paced = OhaDriver().argv(plan(250, 20, 25))
    assert paced[paced.index("-q") + 1] == "250" and "--latency-correction" in paced
