"""capload's driver: its command line for each connection life, and its parser against real output captured
from the load host (tests/load/data/README.md says how)."""
from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from capbench.load.drivers import DriverError, Envelope, StepPlan
from capbench.load.drivers.capload import CaploadDriver, read_rows

DATA = Path(__file__).parent / "data"
TLS_URL = "https://lb:8443/grind?variant=v1&level=13"


def files_of(folder: str) -> tuple[dict[str, bytes], Envelope]:
    files = {p.name: p.read_bytes() for p in (DATA / folder).iterdir()}
    return files, Envelope.parse(files["envelope"].decode())


def plan(rate: float, duration: int, connections: int, url: str = TLS_URL, **more) -> StepPlan:
    return replace(StepPlan(url=url, rate=rate, duration_s=duration, connections=connections, threads=2,
                            timeout_s=10, users_file=None, urls_file=None, session_requests=5), **more)


def test_a_user_keeps_one_url_and_one_connection_for_their_session():
    argv = CaploadDriver().argv(plan(100, 3, 8, urls_file="/tmp/cap/urls.txt", users_file="/tmp/cap/users.txt",
                                     connection_life="per-user"))
    assert argv[:2] == ["capload", "-rate"]
    assert argv[argv.index("-life") + 1] == "per-user" and argv[argv.index("-session-requests") + 1] == "5"
    assert argv[-3:] == ["-urls-file", "/tmp/cap/urls.txt", "-sessions"]
    assert argv[argv.index("-cacert") + 1] == "/run/secrets/capbench_ca"  # verified, never --insecure


def test_a_scenario_files_lines_are_drawn_per_request_and_clear_text_has_no_authority():
    argv = CaploadDriver().argv(plan(50, 2, 4, url="http://lb:8080/x", urls_file="urls.txt", http="2",
                                     method="POST", headers=(("Content-Type", "application/json"),),
                                     body_file="body"))
    assert "-sessions" not in argv and "-cacert" not in argv
    assert argv[argv.index("-http") + 1] == "2" and argv[argv.index("-method") + 1] == "POST"
    assert argv[argv.index("-H") + 1] == "Content-Type: application/json"
    assert argv[argv.index("-body-file") + 1] == "body"
    # With SCENARIO=session's users too, a scenario file's requests are still each drawn anew by weight.
    with_users = CaploadDriver().argv(plan(50, 2, 4, url="http://lb:8080/x", urls_file="urls.txt",
                                           users_file="users.txt", requests_file="requests.lua"))
    assert "-sessions" not in with_users


def test_a_closed_loop_is_not_capload_s():
    with pytest.raises(DriverError, match="closed loop"):
        CaploadDriver().argv(plan(0, 2, 4))


def test_per_user_step_over_tls():
    files, envelope = files_of("capload-per-user-tls")
    step = plan(100, 3, 8, urls_file="urls.txt", users_file="users.txt", connection_life="per-user")
    result = CaploadDriver().parse(files, step, envelope, "capload 1.0.0").result
    assert result.responses == 300 and result.intended == 300 and result.unanswered == 0
    assert result.achieved_rps == pytest.approx(100.0)
    assert not any(result.errors.values())
    assert result.latency_ms["p50"] <= result.latency_ms["p99"] <= result.latency_ms["max"]
    # 300 requests of 5-request users over 8 workers: 60 whole users, and each worker's last one cut short.
    assert "capload opened 64 connections (64 TLS handshakes), per-user" in result.notes
    assert result.tool.name == "capload" and "-life" in result.tool.argv


def test_latency_runs_from_the_due_time():
    files, _ = files_of("capload-per-user-tls")
    rows, lags = read_rows(files["requests.tsv"].decode())
    due, sent, end, latency, status = rows[0]  # captured with capload 1.0.0: no stamp, so woken = due
    assert latency == pytest.approx(end - due) and due <= sent <= end and status == 200 and set(lags) == {0.0}
    # The schedule: request k due at k / rate, 100/s here, whichever worker sent it.
    assert sorted(round(row[0] * 100) for row in rows) == list(range(300))


def test_refused_connections_are_connect_errors():
    files, envelope = files_of("capload-refused")
    result = CaploadDriver().parse(files, plan(50, 2, 4, url="http://lb:9999/grind"), envelope, "capload").result
    assert result.responses == 0 and result.errors["connect"] == 100 and result.unanswered == 0
    assert result.latency_ms == {}


def test_http2_with_a_connection_per_request():
    files, envelope = files_of("capload-h2-per-request")
    step = plan(50, 2, 4, http="2", connection_life="per-request")
    result = CaploadDriver().parse(files, step, envelope, "capload").result
    assert result.responses == 100
    assert "capload opened 100 connections (100 TLS handshakes), per-request" in result.notes


def test_a_step_without_its_summary_fails_with_what_the_tool_said():
    files, envelope = files_of("capload-refused")
    del files["capload.json"]
    with pytest.raises(DriverError, match="capload exited"):
        CaploadDriver().parse(files, plan(50, 2, 4), envelope, "capload")


def test_a_summary_and_rows_that_disagree_are_refused():
    files, envelope = files_of("capload-h2-per-request")
    files["requests.tsv"] = b"\n".join(files["requests.tsv"].splitlines()[:-1]) + b"\n"
    with pytest.raises(DriverError, match="counted 100 responses but stored 99 rows"):
        CaploadDriver().parse(files, plan(50, 2, 4), envelope, "capload")


def test_a_worker_woken_late_is_the_generators_lag_not_the_servers():
    """A stamp column (capload 1.1): half the requests' workers woke 50 ms after their due time (a starved
    generator), and the verdict's latency still runs from the due time."""
    files, envelope = files_of("capload-per-user-tls")
    lines = files["requests.tsv"].decode().splitlines()
    out = ["due_s\tstamp_s\tsent_s\tend_s\tstatus"]
    for n, line in enumerate(lines[1:]):
        due, sent, end, status = line.split("\t")
        late = 0.05 if n % 2 else 0.0
        out.append("\t".join((due, f"{float(due) + late:.6f}", f"{float(sent) + late:.6f}", f"{float(end) + late:.6f}",
                              status)))
    files["requests.tsv"] = ("\n".join(out) + "\n").encode()
    step = plan(100, 3, 8, urls_file="urls.txt", users_file="users.txt", connection_life="per-user")
    result = CaploadDriver().parse(files, step, envelope, "capload 1.1.0").result
    assert result.behind_schedule == 150 and result.schedule_lag_ms_p99 == pytest.approx(50, rel=0.01)
    assert result.latency_ms["p99"] >= 50 > result.p99_without_generator_lag_ms
