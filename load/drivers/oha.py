"""oha (crates.io) as a constant-rate driver: `-q` total rate over `-c` connections for `-z` seconds with
`--latency-correction`, so each latency runs from when its request was due, not from when a connection came
free. It writes a JSON summary (errors by message, status codes) and, with `--db-url`, one SQLite row per
response (due time, send, end, status): percentiles, slow responses and the generator's own lag are computed
from those rows with HdrHistogram, the same way wrk2 records them."""
from __future__ import annotations

import bisect
import json
import sqlite3
import tempfile
from pathlib import Path

from hdrh.histogram import HdrHistogram

from load.drivers import DriverError, Envelope, StepPlan, tool_failure
from rundata.records import SLOW_MS, SPECTRUM_PERCENTILES, StepResult, Tool, empty_errors, socket_errors

SUMMARY_FILE = "oha.json"
REQUESTS_DB = "requests.db"
# oha reports each of its connection tasks cancelled at the end of the step as this: a request in flight or an
# idle connection, neither answered nor failed (wrk2 likewise stops at its deadline). At most this many were
# in flight at the end.
DEADLINE_MESSAGE = "aborted due to deadline"
# A request sent this much after it was due, while a connection was free, was held back by the generator.
LATE_MS = 10.0
# Error messages (Rust's io and hyper errors) to the study's kinds; the first matching fragment wins.
ERROR_FRAGMENTS = (
    ("timeout", "timeout"), ("timed out", "timeout"),
    ("reset", "read"), ("closed before message completed", "read"), ("incomplete", "read"),
    ("end of file", "read"), ("eof", "read"), ("parse", "read"),
    ("broken pipe", "write"), ("write", "write"),
    ("refused", "connect"), ("unreachable", "connect"), ("no route", "connect"), ("dns", "connect"),
    ("tcp connect", "connect"), ("trying to connect", "connect"),
)


def classify_error(message: str) -> str:
    lowered = message.lower()
    for fragment, kind in ERROR_FRAGMENTS:
        if fragment in lowered:
            return kind
    return "other"


class OhaDriver:
    name = "oha"
    min_step_s = 1

    def __init__(self, binary: str = "oha"):
        self.binary = binary

    def argv(self, plan: StepPlan) -> list[str]:
        target = ["--urls-from-file", plan.urls_file] if plan.urls_file else [plan.url]
        # Rate 0: a closed loop (each connection sends its next request when the last is answered), where
        # there is no schedule to correct latency against.
        pace = ["-q", f"{plan.rate:g}", "--latency-correction"] if plan.rate > 0 else []
        return [self.binary, "--no-tui", "--output-format", "json", "-o", SUMMARY_FILE,
                "--db-url", REQUESTS_DB, *pace,
                "-z", f"{plan.duration_s}s", "-c", str(plan.connections), "-t", f"{plan.timeout_s}s",
                *target]

    def version_argv(self) -> list[str]:
        return [self.binary, "--version"]

    def parse(self, files: dict[str, bytes], plan: StepPlan, envelope: Envelope, version: str) -> StepResult:
        if SUMMARY_FILE not in files:
            raise tool_failure(self.name, files, envelope)
        with tempfile.TemporaryDirectory() as tmp:
            rows = []
            if REQUESTS_DB in files:
                db_path = Path(tmp) / REQUESTS_DB
                db_path.write_bytes(files[REQUESTS_DB])
                rows = read_rows(db_path)
        return parse_results(json.loads(files[SUMMARY_FILE]), rows, plan, envelope,
                             Tool(self.name, version, self.argv(plan)))


def read_rows(db_path: Path) -> list[tuple[float, float, float, float, int]]:
    """(due, sent, end, corrected duration, status) per response, in seconds from the start of the run."""
    with sqlite3.connect(db_path) as db:
        return db.execute(
            "SELECT COALESCE(start_latency_correction, start), start, end, duration, status FROM oha").fetchall()


def late_with_free_connection(rows: list[tuple], connections: int, in_flight_at_end: int,
                              late_ms: float = LATE_MS) -> int:
    """Requests sent more than late_ms after they were due although a connection was free when they were due:
    the generator, not the server, held them back. Busy connections at a moment t are the stored responses with
    sent <= t < end, plus (conservatively, at any t) the requests still in flight when the step ended, which
    have no row."""
    sent_times = sorted(row[1] for row in rows)
    end_times = sorted(row[2] for row in rows)
    late = 0
    for due, sent, *_ in rows:
        if (sent - due) * 1000.0 > late_ms:
            busy = bisect.bisect_right(sent_times, due) - bisect.bisect_right(end_times, due)
            if busy + in_flight_at_end < connections:
                late += 1
    return late


def parse_results(summary: dict, rows: list[tuple], plan: StepPlan, envelope: Envelope, tool: Tool) -> StepResult:
    """One StepResult from oha's JSON summary and its per-response rows."""
    if "summary" not in summary or "errorDistribution" not in summary:
        raise DriverError(f"oha's JSON has no summary or errorDistribution: keys {sorted(summary)}")
    status_total = sum(summary.get("statusCodeDistribution", {}).values())
    if status_total != len(rows):
        raise DriverError(f"oha counted {status_total} responses but stored {len(rows)} rows")
    errors = empty_errors()
    messages = dict(summary["errorDistribution"])
    cut = messages.get(DEADLINE_MESSAGE, 0)
    for message, count in messages.items():
        if message != DEADLINE_MESSAGE:
            errors[classify_error(message)] += count

    corrected = HdrHistogram(1, 3_600_000_000, 3)  # microseconds, 1 µs to 1 h, 3 significant digits
    service_total = 0.0
    lag = HdrHistogram(1, 3_600_000_000, 3)
    for due, sent, end, duration, status in rows:
        corrected.record_value(max(1, round(duration * 1e6)))
        service_total += end - sent
        lag.record_value(max(1, round((sent - due) * 1e6)))
        if status >= 400:
            errors["status"] += 1
        if duration * 1000.0 > SLOW_MS:
            errors["slow"] += 1
    responses = len(rows)
    latency, spectrum = {}, []
    if responses:
        latency = {name: corrected.get_value_at_percentile(p) / 1000.0
                   for name, p in (("p50", 50), ("p90", 90), ("p99", 99), ("p99.9", 99.9))}
        latency["max"] = corrected.get_max_value() / 1000.0
        spectrum = [[p, corrected.get_value_at_percentile(p) / 1000.0] for p in SPECTRUM_PERCENTILES]
        spectrum.append([100, latency["max"]])
    return StepResult(
        offered_rps=plan.rate, duration_s=plan.duration_s, connections=plan.connections,
        achieved_rps=round(responses / plan.duration_s, 2), responses=responses, latency_ms=latency,
        errors=errors, error_messages=messages, start_epoch=envelope.start_epoch, end_epoch=envelope.end_epoch,
        tool=tool, intended=round(plan.rate * plan.duration_s) if plan.rate > 0 else None,
        sent=responses + socket_errors(errors),
        mean_service_ms=round(1000.0 * service_total / responses, 3) if responses else None,
        send_lag_ms_p99=lag.get_value_at_percentile(99) / 1000.0 if responses else None,
        late_with_free_connection=late_with_free_connection(rows, plan.connections, cut),
        loadhost=envelope.usage(), latency_spectrum_ms=spectrum,
        notes=[f"{cut} connections cut at the end of the step, idle or with a request in flight (not counted)"]
        if cut else [])
