"""oha (crates.io) as a constant-rate driver: `-q` total rate over `-c` connections for `-z` seconds with
`--latency-correction`, so each latency runs from when its request was due, not from when a connection came
free. It writes a JSON summary (errors by message, status codes) and, with `--db-url`, one SQLite row per
response (due time, send, end, status), from which capbench/load/drivers/per_response.py computes the figures."""
from __future__ import annotations

import json
import sqlite3
import tempfile
from pathlib import Path

from capbench.hosts.balancer_address import ca_file
from capbench.load.drivers import DriverError, Envelope, GeneratorRun, StepPlan, tool_failure
from capbench.load.drivers.per_response import run_from_rows
from capbench.rundata.records import Tool

SUMMARY_FILE = "oha.json"
REQUESTS_DB = "requests.db"
# oha reports each of its connection tasks cancelled at the end of the step as this: a request in flight or an
# idle connection, neither answered nor failed (wrk2 likewise stops at its deadline). At most this many were
# in flight at the end.
DEADLINE_MESSAGE = "aborted due to deadline"
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


def parse_run(summary: dict, rows: list[tuple], plan: StepPlan, envelope: Envelope, tool: Tool) -> GeneratorRun:
    """This generator's part of a step from oha's JSON summary and its per-response rows."""
    if "summary" not in summary or "errorDistribution" not in summary:
        raise DriverError(f"oha's JSON has no summary or errorDistribution: keys {sorted(summary)}")
    messages = dict(summary["errorDistribution"])
    cut = messages.pop(DEADLINE_MESSAGE, 0)
    return run_from_rows(summary.get("statusCodeDistribution", {}), messages, cut, rows, plan, envelope, tool)
