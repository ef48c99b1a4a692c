"""wrk2 (a binary the user supplies) as a constant-rate driver: `-R` total rate over `-c` connections and
`-t` threads for `-d` seconds. wrk2 records each latency from the request's scheduled send time. Its results
come from our Lua done() reporter (load/wrk2/capbench.lua, JSON), never from its printed text.

wrk2's rules, enforced here: threads <= connections and each thread's rate >= 1 request/s; its first 10 s
calibrate and are left out of the latency histogram, so a step must be long enough to measure after them."""
from __future__ import annotations

import json
import math

from capbench.load.drivers import LOADHOST_LIB, DriverError, Envelope, GeneratorRun, StepPlan, tool_failure
from capbench.load.drivers.latency import (
    StepLatency,
    add_unanswered,
    figures,
    new_histogram,
    record_ms,
    unanswered_count,
)
from capbench.rundata.records import StepResult, Tool, empty_errors, socket_errors
from capbench.settings.bench import WRK2_CALIBRATION_S, WRK2_MIN_STEP_S
from capbench.settings.scenario_file import UserScenario

REPORT_FILE = "wrk2.json"
SCRIPT = f"{LOADHOST_LIB}/wrk2/capbench.lua"
# Where the harness puts the user's binary on the load host.
LOADHOST_BINARY = "/tmp/capbench/bin/wrk2"


def thread_count(wanted: int, connections: int, rate: float) -> int:
    """As many threads as wanted, but no more than connections, and each with at least 1 request/s."""
    return max(1, min(wanted, connections, math.floor(rate)))


class Wrk2Driver:
    name = "wrk2"
    min_step_s = WRK2_MIN_STEP_S
    whole_rates = True  # -R takes whole requests/s only ("-R 362.5" stops it with its usage text)

    def __init__(self, binary: str = LOADHOST_BINARY):
        self.binary = binary

    def argv(self, plan: StepPlan) -> list[str]:
        threads = thread_count(plan.threads, plan.connections, plan.rate)
        # capbench.lua's arguments: USERS_FILE ('-': no users) SESSION_REQUESTS [REQUESTS_FILE [JAR_PREFIX]].
        if plan.requests_file:
            script_args = ["--", plan.users_file or "-", str(plan.session_requests), plan.requests_file]
            if plan.cookie_jar and plan.users_file:
                script_args.append(plan.cookie_jar)
        else:
            script_args = ["--", plan.users_file, str(plan.session_requests)] if plan.users_file else []
        return [self.binary, "-t", str(threads), "-c", str(plan.connections), "-d", f"{plan.duration_s}s",
                "-R", f"{plan.rate:g}", "--timeout", f"{plan.timeout_s}s", "-s", SCRIPT, plan.url, *script_args]

    def version_argv(self) -> list[str]:
        # wrk2 prints its version (it calls itself wrk 4.0.0) with the usage text, and exits 1.
        return ["sh", "-c", f"{self.binary} -v 2>&1 | head -1; sha256sum {self.binary} | cut -c1-16"]

    def parse(self, files: dict[str, bytes], plan: StepPlan, envelope: Envelope, version: str) -> GeneratorRun:
        if REPORT_FILE not in files:
            raise tool_failure(self.name, files, envelope)
        return parse_run(json.loads(files[REPORT_FILE]), plan, envelope, Tool(self.name, version, self.argv(plan)))


def parse_run(report: dict, plan: StepPlan, envelope: Envelope, tool: Tool) -> GeneratorRun:
    """This generator's part of a step from the JSON our done() reporter wrote. With the reporter's whole
    histogram the requests unanswered at the end go into the latency at their least possible age
    (capbench/load/drivers/latency.py), and the histogram is what a merge with other load hosts adds up; a report of an
    older capbench.lua has only wrk2's own percentiles, says so, and cannot be merged."""
    for key in ("duration_us", "requests", "errors", "latency_us", "latency_count", "slow_share"):
        if key not in report:
            raise DriverError(f"wrk2 report lacks '{key}': keys {sorted(report)}")
    duration_s = report["duration_us"] / 1e6
    responses = int(report["requests"])
    errors = empty_errors()
    for kind in ("connect", "read", "write", "status", "timeout"):
        errors[kind] = int(report["errors"][kind])
    if plan.success is not None:
        # wrk2 itself counts statuses above 399; a scenario's `success` list is counted by capbench.lua.
        if "not_success" not in report:
            raise DriverError("wrk2 report lacks 'not_success': the step had a scenario file, and its capbench.lua "
                              "did not read it (an older capbench.lua on the load host?)")
        errors["status"] = int(report["not_success"])
    # The share above 5 s is known for the measured (post-calibration) part; apply it to all responses.
    errors["slow"] = round(report["slow_share"] * responses)
    no_response = socket_errors(errors)
    intended = round(plan.rate * plan.duration_s)
    unanswered = unanswered_count(intended, responses, no_response)
    notes = [f"latency from {report['latency_count']} responses after wrk2's 10 s calibration"]
    book = None
    if "histogram_us" in report:
        histogram = new_histogram()
        for value_us, count in report["histogram_us"]:
            record_ms(histogram, value_us / 1000.0, count)
        add_unanswered(histogram, unanswered, plan.rate, plan.duration_s)
        latency, spectrum = figures(histogram)
        book = StepLatency(plan.duration_s, float(WRK2_CALIBRATION_S))
        book.add_steady(histogram)
        if unanswered:
            notes.append(f"{unanswered} requests unanswered at the end of the step, in the latency tail at their "
                         "least possible age")
    else:
        latency_us = report["latency_us"]
        latency = {} if report["latency_count"] == 0 else {
            name: latency_us[name] / 1000.0 for name in ("p50", "p90", "p99", "p99.9", "max")}
        spectrum = [[p, us / 1000.0] for p, us in report.get("spectrum_us", [])] if latency else []
        notes.append(f"an older capbench.lua: {unanswered} unanswered requests are not in the latency figures")
    return GeneratorRun(StepResult(
        offered_rps=plan.rate, duration_s=plan.duration_s, connections=plan.connections,
        achieved_rps=round(responses / duration_s, 2) if duration_s else 0.0, responses=responses,
        latency_ms=latency, errors=errors, error_messages={}, start_epoch=envelope.start_epoch,
        end_epoch=envelope.end_epoch, tool=tool, intended=intended, sent=responses + no_response,
        unanswered=unanswered, loadhost=envelope.usage(), latency_spectrum_ms=spectrum, notes=notes,
        ramp_s=float(WRK2_CALIBRATION_S)), book)


def lua_string(data: bytes) -> str:
    """A Lua string literal of any bytes: printable ASCII as is, everything else (quotes, backslashes, line ends,
    non-ASCII) as a decimal escape, which every Lua reads the same."""
    return '"' + "".join(chr(b) if 32 <= b < 127 and b not in (34, 92) else f"\\{b:03d}" for b in data) + '"'


def scenario_table(scenario: UserScenario) -> bytes:
    """The scenario as capbench.lua reads it (dofile): a Lua chunk returning {success = {...}, requests = {{method,
    path, headers, body, weight}, ...}}, every string escaped (lua_string), so nothing in the file is code."""
    lines = [f"-- capbench scenario {lua_string(scenario.name.encode())}, sha256 {scenario.sha256}",
             "return {",
             "  success = {" + ", ".join(str(status) for status in scenario.success) + "},",
             "  requests = {"]
    for r in scenario.requests:
        headers = ", ".join(f"[{lua_string(n.encode())}] = {lua_string(v.encode())}" for n, v in r.headers)
        body = lua_string(r.body) if r.body is not None else "nil"
        lines.append(f"    {{method = {lua_string(r.method.encode())}, path = {lua_string(r.path.encode())}, "
                     f"headers = {{{headers}}}, body = {body}, weight = {r.weight}}},")
    lines += ["  },", "}", ""]
    return "\n".join(lines).encode()
