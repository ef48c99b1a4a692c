"""Load generator drivers: each turns a step plan into a command for the load host and parses what the tool
left into a StepResult. Same semantics for all: a fixed total rate over a fixed number of connections for a
fixed time, latency measured from each request's intended send time (coordinated omission corrected)."""
from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from hdrh.histogram import HdrHistogram

from capbench.checkout import ROOT
from capbench.load.drivers.latency import StepLatency
from capbench.rundata.records import LoadHostUsage, StepResult

# Where the load image keeps our files for the generators (cluster/provision/load.sh installs them).
LOADHOST_LIB = "/opt/capbench/load"


@dataclass(frozen=True)
class StepPlan:
    """What to send in one step. Paths are on the load host."""
    url: str  # the target with variant and level, without a user id
    rate: float  # requests per second, in total; 0: a closed loop (oha only: make bench-usl)
    duration_s: int
    connections: int
    threads: int
    timeout_s: int
    users_file: str | None  # session scenario: one user id per line
    urls_file: str | None  # session scenario (or SCENARIO_FILE's) for tools that pick a URL per request
    session_requests: int
    # The first seconds of the step whose requests are recorded apart from its verdict (drivers/latency.py).
    ramp_s: float = 0.0
    # SCENARIO_FILE's requests (capbench/settings/scenario_file.py); the defaults send WORKLOAD's URL. urls_file then holds
    # each request's URL `weight` times (oha); users_file (SCENARIO=session) the users whose cookies wrk2 keeps.
    requests_file: str | None = None  # wrk2: the scenario as capbench.lua reads it (drivers/wrk2.py writes it)
    success: tuple[int, ...] | None = None  # the statuses that count as answered; None: any below 400
    # oha: what every request sends (a scenario whose requests all share them; capbench/settings/bench.py: check_for_driver).
    method: str = "GET"
    headers: tuple[tuple[str, str], ...] = ()
    body_file: str | None = None
    # wrk2 with a scenario and users: where its users' cookies are kept across the steps of one search (capbench.lua's
    # JAR_PREFIX); None: a user's cookies last one step.
    cookie_jar: str | None = None
    # The client's HTTP (HTTP): "1.1", or "2" (oha only: h2 by ALPN over TLS, h2c by prior knowledge in clear text).
    http: str = "1.1"
    # How long a connection lives (CONNECTION_LIFE): "keep" for the step, or "per-request" (oha only).
    connection_life: str = "keep"


@dataclass(frozen=True)
class Envelope:
    """What run-step recorded around the tool on the load host."""
    start_epoch: float
    end_epoch: float
    cpu_start: float
    cpu_end: float
    cpus: float
    exit_status: int
    tool_cpu_s: float | None = None  # the tool's threads: on a CPU, and runnable but waiting for one
    tool_cpu_wait_s: float | None = None
    quota_periods: int = 0  # the load host's CPU quota periods over the step, and those it was throttled in
    throttled_periods: int = 0

    @classmethod
    def parse(cls, text: str) -> "Envelope":
        values = dict(line.split("=", 1) for line in text.splitlines() if "=" in line)
        return cls(start_epoch=float(values["start_epoch"]), end_epoch=float(values["end_epoch"]),
                   cpu_start=float(values["cpu_start"]), cpu_end=float(values["cpu_end"]),
                   cpus=float(values["cpus"]), exit_status=int(values["exit"]),
                   tool_cpu_s=int(values["tool_cpu_ns"]) / 1e9 if "tool_cpu_ns" in values else None,
                   tool_cpu_wait_s=int(values["tool_cpu_wait_ns"]) / 1e9 if "tool_cpu_wait_ns" in values else None,
                   quota_periods=int(values.get("quota_periods", 0)),
                   throttled_periods=int(values.get("throttled_periods", 0)))

    def usage(self) -> LoadHostUsage:
        return LoadHostUsage(cpu_seconds=round(self.cpu_end - self.cpu_start, 3),
                             wall_seconds=round(self.end_epoch - self.start_epoch, 3), cpus_available=self.cpus,
                             tool_cpu_seconds=None if self.tool_cpu_s is None else round(self.tool_cpu_s, 3),
                             tool_cpu_wait_seconds=None if self.tool_cpu_wait_s is None
                             else round(self.tool_cpu_wait_s, 3),
                             quota_periods=self.quota_periods, throttled_periods=self.throttled_periods)


@dataclass
class GeneratorRun:
    """One load host's part of a step: its own result (its share, its self-check) and what an exact merge of
    several adds up (capbench/load/drivers/merge.py): its latency book, and (oha) its lag behind its schedule and from
    due to sent, as histograms."""
    result: StepResult
    book: StepLatency | None  # None: the tool gave no histogram to merge (an older capbench.lua)
    lag: HdrHistogram | None = None
    send_lag: HdrHistogram | None = None


class DriverError(RuntimeError):
    """The tool did not run or left no results; the message says what it printed."""


class Driver(Protocol):
    name: str
    min_step_s: int
    whole_rates: bool  # its rate option takes whole requests/s only (capbench/load/drivers/merge.py's shares)

    def argv(self, plan: StepPlan) -> list[str]:
        """The tool's command line on the load host (run inside run-step, in $CAPBENCH_STEP_DIR)."""

    def parse(self, files: dict[str, bytes], plan: StepPlan, envelope: Envelope, version: str) -> GeneratorRun:
        """This generator's part of the step from the files the tool left in its step folder."""

    def version_argv(self) -> list[str]:
        """A command printing the tool's version on the load host."""


# Where `make wrk2` builds it (load/install-wrk2.sh).
BUILT_WRK2 = ROOT / ".capbench" / "tools" / "wrk2" / "wrk2"


def find_wrk2(wrk2_env: str | None, built: bool = False) -> Path | None:
    """The user's wrk2 binary: WRK2=/path, else wrk2 on PATH; with `built` (LOADGEN=wrk2 asked for it), else the one
    `make wrk2` built. LOADGEN=auto does not pick that one: it would lengthen every step to wrk2's 20 s."""
    if wrk2_env:
        return Path(wrk2_env)
    found = shutil.which("wrk2")
    if found:
        return Path(found)
    return BUILT_WRK2 if built and BUILT_WRK2.is_file() else None


def tool_failure(name: str, files: dict[str, bytes], envelope: Envelope) -> DriverError:
    tail = (files.get("stderr", b"") + files.get("stdout", b"")).decode(errors="replace").strip()
    tail = " | ".join(tail.splitlines()[-5:]) or "no output"
    return DriverError(f"{name} exited {envelope.exit_status} and left no results: {tail}")
