"""capload (load/capload/, ours, Go's standard library) as a constant-rate driver for the connections oha and
wrk2 cannot open: one per user's session (CONNECTION_LIFE=per-user) over HTTP/1.1 or HTTP/2, and one per request.
Its schedule is oha's: request k is due at k / rate, each of `connections` workers (a user at a time) takes the
next due request when free, and each latency runs from the due time. It writes one TSV row per answered request
(due, when its worker woke for it, sent, end, status) and a JSON summary (statuses, errors by message,
connections and TLS handshakes it opened); the figures come from the rows as oha's do
(capbench/load/drivers/per_response.py), its own lag from when each worker woke against the request's due time."""
from __future__ import annotations

import csv
import io
import json

from capbench.hosts.balancer_address import ca_file
from capbench.load.drivers import DriverError, Envelope, GeneratorRun, StepPlan, tool_failure
from capbench.load.drivers.per_response import run_from_rows
from capbench.rundata.records import Tool

SUMMARY_FILE = "capload.json"
ROWS_FILE = "requests.tsv"
# Where the load image installs it (cluster/provision/load.sh).
LOADHOST_BINARY = "capload"


class CaploadDriver:
    name = "capload"
    min_step_s = 1
    whole_rates = False

    def __init__(self, binary: str = LOADHOST_BINARY):
        self.binary = binary

    def argv(self, plan: StepPlan) -> list[str]:
        if plan.rate <= 0:
            raise DriverError("capload paces every step at a rate: a closed loop (rate 0) is oha's")
        # The session scenario's file is one URL per user: a user keeps theirs for SESSION_REQUESTS requests (over
        # one connection where CONNECTION_LIFE=per-user). A SCENARIO_FILE's lines are its requests by weight,
        # each drawn anew.
        sessions = plan.users_file is not None and plan.requests_file is None
        target = (["-urls-file", plan.urls_file, *(["-sessions"] if sessions else [])]
                  if plan.urls_file else ["-url", plan.url])
        sends = [*(["-method", plan.method] if plan.method != "GET" else []),
                 *[arg for name, value in plan.headers for arg in ("-H", f"{name}: {value}")],
                 *(["-body-file", plan.body_file] if plan.body_file else [])]
        verify = ["-cacert", ca] if (ca := ca_file(plan.url)) else []
        return [self.binary, "-rate", f"{plan.rate:g}", "-duration", f"{plan.duration_s}s",
                "-connections", str(plan.connections), "-timeout", f"{plan.timeout_s}s", "-http", plan.http,
                "-life", plan.connection_life, "-session-requests", str(plan.session_requests),
                "-report", SUMMARY_FILE, "-rows", ROWS_FILE, *verify, *sends, *target]

    def version_argv(self) -> list[str]:
        return [self.binary, "-version"]

    def parse(self, files: dict[str, bytes], plan: StepPlan, envelope: Envelope, version: str) -> GeneratorRun:
        if SUMMARY_FILE not in files or ROWS_FILE not in files:
            raise tool_failure(self.name, files, envelope)
        return parse_run(json.loads(files[SUMMARY_FILE]), files[ROWS_FILE].decode(), plan, envelope,
                         Tool(self.name, version, self.argv(plan)))


def read_rows(text: str) -> tuple[list[tuple[float, float, float, float, int]], list[float]]:
    """(woken, sent, end, latency from woken, status) per answered request, in seconds from the start of the step,
    and each one's generator lag (ms): how late its worker woke for it against its due time. A request whose worker
    was busy past its due time has no lag of the generator's: it waited for a connection (capload's stamp is then its
    due time), which the latency from the due time holds."""
    rows, lags = [], []
    for record in csv.DictReader(io.StringIO(text), delimiter="\t"):
        due, sent, end = float(record["due_s"]), float(record["sent_s"]), float(record["end_s"])
        stamp = float(record.get("stamp_s") or due)  # a capload before 1.1 wrote no stamp
        rows.append((stamp, sent, end, end - stamp, int(record["status"])))
        lags.append(max(0.0, 1000.0 * (stamp - due)))
    return rows, lags


def parse_run(summary: dict, rows_text: str, plan: StepPlan, envelope: Envelope, tool: Tool) -> GeneratorRun:
    """This generator's part of a step from capload's summary and rows, with what it opened in the notes (the
    balancer's own count of the client's leg is capbench/load/client_leg.py's)."""
    for key in ("statuses", "errors", "cut", "connections_opened", "tls_handshakes"):
        if key not in summary:
            raise DriverError(f"capload's summary lacks '{key}': keys {sorted(summary)}")
    rows, lags = read_rows(rows_text)
    run = run_from_rows(summary["statuses"], summary["errors"], summary["cut"], rows, plan, envelope, tool, lags)
    run.result.notes.append(f"capload opened {summary['connections_opened']} connections "
                            f"({summary['tls_handshakes']} TLS handshakes), {plan.connection_life}")
    return run
