"""oha (crates.io) as a constant-rate driver: `-q` total rate over `-c` connections for `-z` seconds with
`--latency-correction`, so each latency runs from when its request was due, not from when a connection came
free. It writes a JSON summary (errors by message, status codes) and, with `--db-url`, one SQLite row per
response (due time, send, end, status): percentiles, slow responses and the generator's own lag are computed
from those rows with HdrHistogram, the same way wrk2 records them."""
from __future__ import annotations

import json
import sqlite3
import tempfile
from pathlib import Path

from capbench.hosts.balancer_address import ca_file
from capbench.load.drivers import DriverError, Envelope, GeneratorRun, StepPlan, tool_failure
from capbench.load.drivers.latency import StepLatency, figures, new_histogram, record_ms, unanswered_count
from capbench.rundata.records import GENERATOR_LATE_MS, SLOW_MS, StepResult, Tool, empty_errors, socket_errors

SUMMARY_FILE = "oha.json"
REQUESTS_DB = "requests.db"
# oha reports each of its connection tasks cancelled at the end of the step as this: a request in flight or an
# idle connection, neither answered nor failed (wrk2 likewise stops at its deadline). At most this many were
# in flight at the end.
DEADLINE_MESSAGE = "aborted due to deadline"
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
    whole_rates = False  # -q takes a fraction

    def __init__(self, binary: str = "oha"):
        self.binary = binary

    def argv(self, plan: StepPlan) -> list[str]:
        target = ["--urls-from-file", plan.urls_file] if plan.urls_file else [plan.url]
        sends = [*(["-m", plan.method] if plan.method != "GET" else []),
                 *[arg for name, value in plan.headers for arg in ("-H", f"{name}: {value}")],
                 *(["-D", plan.body_file] if plan.body_file else [])]
        # Rate 0: a closed loop (each connection sends its next request when the last is answered), where
        # there is no schedule to correct latency against.
        pace = ["-q", f"{plan.rate:g}", "--latency-correction"] if plan.rate > 0 else []
        # Over TLS, the balancer's certificate verified against the checkout's authority (no --insecure).
        verify = ["--cacert", ca] if (ca := ca_file(plan.url)) else []
        # HTTP/2 with oha's one stream per connection at a time (its -p 1): each connection is one user's, whose
        # requests follow one another, as they do over HTTP/1.1; streams in parallel on one connection are not
        # what a step of users sends.
        http2 = ["--http2"] if plan.http == "2" else []
        # CONNECTION_LIFE=per-request: a new connection for every request (over TLS a handshake each); each of the
        # step's connections is then a user who reconnects for each request. Its latency, from the request's due
        # time, includes the connect and the handshake.
        lives = ["--disable-keepalive"] if plan.connection_life == "per-request" else []
        return [self.binary, "--no-tui", "--output-format", "json", "-o", SUMMARY_FILE,
                "--db-url", REQUESTS_DB, *pace,
                "-z", f"{plan.duration_s}s", "-c", str(plan.connections), "-t", f"{plan.timeout_s}s",
                *http2, *lives, *verify, *sends, *target]

    def version_argv(self) -> list[str]:
        return [self.binary, "--version"]

    def parse(self, files: dict[str, bytes], plan: StepPlan, envelope: Envelope, version: str) -> GeneratorRun:
        if SUMMARY_FILE not in files:
            raise tool_failure(self.name, files, envelope)
        with tempfile.TemporaryDirectory() as tmp:
            rows = []
            if REQUESTS_DB in files:
                db_path = Path(tmp) / REQUESTS_DB
                db_path.write_bytes(files[REQUESTS_DB])
                rows = read_rows(db_path)
        return parse_run(json.loads(files[SUMMARY_FILE]), rows, plan, envelope,
                         Tool(self.name, version, self.argv(plan)))


def read_rows(db_path: Path) -> list[tuple[float, float, float, float, int]]:
    """(due, sent, end, corrected duration, status) per response, in seconds from the start of the run."""
    with sqlite3.connect(db_path) as db:
        return db.execute(
            "SELECT COALESCE(start_latency_correction, start), start, end, duration, status FROM oha").fetchall()


def schedule_lags(stamps: list[float], failed: int, rate: float) -> list[float]:
    """How late oha handed out each request against its schedule (ms), in the order of `stamps`. oha's producer
    sleeps until request i is due (i / rate from the start) and then stamps it with the time it woke, so a
    producer starved of CPU stamps late and its latency correction cannot see it; the schedule can. The k-th
    stamp in time order is request k + (the failed requests before it, which have no row): taking all `failed`
    as earlier gives each stamp the latest due time it can have, so each lag is a lower bound, and a slow server
    (which delays the send, not the stamp) adds nothing."""
    order = sorted(range(len(stamps)), key=stamps.__getitem__)
    lags = [0.0] * len(stamps)
    for k, index in enumerate(order):
        lags[index] = max(0.0, 1000.0 * (stamps[index] - (k + failed) / rate))
    return lags


def failed_statuses(distribution: dict[str, int], success: tuple[int, ...] | None) -> int:
    """Responses whose status is not a success, from oha's statusCodeDistribution ({"200": n, ...}): with a
    scenario's `success` list, any status not in it; without one, any status of 400 or more (the study's rule)."""
    return sum(count for status, count in distribution.items()
               if (int(status) not in success if success is not None else int(status) >= 400))


def parse_run(summary: dict, rows: list[tuple], plan: StepPlan, envelope: Envelope, tool: Tool) -> GeneratorRun:
    """This generator's part of a step from oha's JSON summary and its per-response rows: its StepResult, and
    its histograms for a merge with other load hosts'."""
    if "summary" not in summary or "errorDistribution" not in summary:
        raise DriverError(f"oha's JSON has no summary or errorDistribution: keys {sorted(summary)}")
    status_total = sum(summary.get("statusCodeDistribution", {}).values())
    if status_total != len(rows):
        raise DriverError(f"oha counted {status_total} responses but stored {len(rows)} rows")
    errors = empty_errors()
    errors["status"] = failed_statuses(summary.get("statusCodeDistribution", {}), plan.success)
    messages = dict(summary["errorDistribution"])
    cut = messages.get(DEADLINE_MESSAGE, 0)
    for message, count in messages.items():
        if message != DEADLINE_MESSAGE:
            errors[classify_error(message)] += count

    responses = len(rows)
    no_response = socket_errors(errors)
    intended = round(plan.rate * plan.duration_s) if plan.rate > 0 else None
    lags = schedule_lags([row[0] for row in rows], no_response, plan.rate) if plan.rate > 0 else [0.0] * responses
    # The verdict's latency runs from the schedule (oha's own correction plus its lag behind the schedule), so a
    # late generator can only make the server look worse; the same without that lag says whether it did.
    book = StepLatency(plan.duration_s, plan.ramp_s)
    lag, send_lag = new_histogram(), new_histogram()  # send lag: stamped to sent, waiting for a free connection
    service_total = 0.0
    for (stamp, sent, end, duration, _status), lag_ms in zip(rows, lags):
        book.add(stamp - lag_ms / 1000.0, duration * 1000.0 + lag_ms, lag_ms)
        record_ms(lag, lag_ms)
        record_ms(send_lag, (sent - stamp) * 1000.0)
        service_total += end - sent
        if duration * 1000.0 + lag_ms > SLOW_MS:
            errors["slow"] += 1
    unanswered = unanswered_count(intended, responses, no_response)
    book.add_unanswered(unanswered, plan.rate)
    latency, spectrum = figures(book.steady)
    late = sum(lag_ms > GENERATOR_LATE_MS for lag_ms in lags) if plan.rate > 0 else None
    result = StepResult(
        offered_rps=plan.rate, duration_s=plan.duration_s, connections=plan.connections,
        achieved_rps=round(responses / plan.duration_s, 2), responses=responses, latency_ms=latency,
        errors=errors, error_messages=messages, start_epoch=envelope.start_epoch, end_epoch=envelope.end_epoch,
        tool=tool, intended=intended, sent=responses + no_response, unanswered=unanswered if intended else None,
        mean_service_ms=round(1000.0 * service_total / responses, 3) if responses else None,
        send_lag_ms_p99=send_lag.get_value_at_percentile(99) / 1000.0 if responses else None,
        behind_schedule=late, schedule_lag_ms_p99=lag.get_value_at_percentile(99) / 1000.0 if late is not None
        and responses else None,
        p99_without_generator_lag_ms=figures(book.without_lag)[0].get("p99") if late is not None else None,
        latency_by_second=book.seconds(), ramp_s=plan.ramp_s, ramp_p99_ms=book.ramp_p99(),
        window_p99_ms=book.window_p99s(),
        loadhost=envelope.usage(), latency_spectrum_ms=spectrum,
        notes=[f"{unanswered} requests unanswered at the end of the step (in flight, queued or never sent), in the "
               f"latency tail at their least possible age; oha cut {cut} connections, idle or busy"]
        if unanswered or cut else [])
    return GeneratorRun(result, book, lag if late is not None else None, send_lag)
