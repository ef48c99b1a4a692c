"""The run-record contract: what one step measured (StepResult, from a driver) and where, when and with what
verdict it ran (StepRecord, one line of steps.jsonl). README.md beside this file lists every field of
run.json, steps.jsonl and summary.json; readers read the lines back into these classes (read_steps).
Units: requests/s, ms, s, epoch seconds. Latencies are corrected for coordinated omission: measured from when
each request was meant to be sent."""
from __future__ import annotations

from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any

from rundata import jsonl

# Written into every step record and summary; raised when a field changes meaning or is removed.
STEP_SCHEMA = "capbench-step/2"
# The study counts a response slower than this as a failure, whatever its status.
SLOW_MS = 5000.0
ERROR_KINDS = ("connect", "read", "write", "timeout", "status", "slow", "other")
# The kinds where no response came back (status and slow ones did get a response).
SOCKET_ERROR_KINDS = ("connect", "read", "write", "timeout", "other")
# The phases of a capacity search's steps (load/search.py): grow, measure a first failure again, bisect,
# confirm the capacity, vote at an unsteady knee, and measure again a step the load host made invalid.
SEARCH_PHASES = ("search", "recheck", "confirm", "repeat", "retry")
# A generator held back by its CPU quota in more than this share of the quota's periods, or (the report's hint)
# one that sent more than this share of the intended requests behind its own schedule, can move the p99 (the
# SLO's figure) by its own doing. The verdict (load/step.py) and the report's hint read this one figure.
GENERATOR_BEHIND_PCT = 1.0
# A request handed out this much after its schedule said counts as behind it (the step record's behind_schedule).
GENERATOR_LATE_MS = 10.0
# The load host's CPU at or above this share of what it may use: the generator itself is saturated.
GENERATOR_CPU_PCT = 90.0


@dataclass
class Tool:
    name: str
    version: str
    argv: list[str]

    @classmethod
    def from_json(cls, data: dict) -> Tool:
        return cls(**known(cls, data))


@dataclass
class LoadHostUsage:
    """CPU of the load host over the step (its cgroup, or the whole machine on a VM)."""
    cpu_seconds: float
    wall_seconds: float
    cpus_available: float
    # The generator's own threads (the kernel's schedstat): time on a CPU, and time runnable but waiting for
    # one, which no quota shows: the cores shared with the nodes were busy.
    tool_cpu_seconds: float | None = None
    tool_cpu_wait_seconds: float | None = None
    # The load host's CPU quota periods in the step and how many of them used the quota up (0 without one).
    quota_periods: int = 0
    throttled_periods: int = 0

    @property
    def throttled_pct(self) -> float:
        return 100.0 * self.throttled_periods / self.quota_periods if self.quota_periods else 0.0

    @property
    def tool_cpu_wait_pct(self) -> float | None:
        """Of the time the generator's threads were runnable, the share they waited for a CPU."""
        if self.tool_cpu_seconds is None or self.tool_cpu_wait_seconds is None:
            return None
        runnable = self.tool_cpu_seconds + self.tool_cpu_wait_seconds
        return 100.0 * self.tool_cpu_wait_seconds / runnable if runnable > 0 else 0.0

    @property
    def cpu_pct(self) -> float:
        """Share of the CPU the load host may use, in percent."""
        if self.wall_seconds <= 0 or self.cpus_available <= 0:
            return 0.0
        return 100.0 * self.cpu_seconds / (self.wall_seconds * self.cpus_available)

    @classmethod
    def from_json(cls, data: dict | None) -> LoadHostUsage | None:
        """As usage_json wrote it (the shares it adds are computed again, not read)."""
        return None if data is None else cls(**known(cls, data))


@dataclass
class Generator:
    """One load host's share of a step (LOAD_HOSTS > 1 sends from several): what it was asked to send, what
    it got, its own CPU and schedule, and how far after the agreed instant it started."""
    host: str
    tool: str  # name and version
    offered_rps: float
    connections: int
    achieved_rps: float
    responses: int
    failures: int
    unanswered: int | None
    behind_schedule: int | None
    start_skew_ms: float | None  # its start after the instant all were given (None: one generator, no instant)
    loadhost: LoadHostUsage | None

    @classmethod
    def from_json(cls, data: dict) -> Generator:
        return cls(**{**known(cls, data), "loadhost": LoadHostUsage.from_json(data.get("loadhost"))})


def doc(meaning: str, **default) -> Any:
    """A field with its one-line meaning where docs/reference/records.md reads it (dataclasses.fields(cls)[i]
    .metadata["doc"]); default= or default_factory= as dataclasses.field takes them."""
    return field(metadata={"doc": meaning}, **default)


def known(cls, data: dict) -> dict:
    """The entries of a written record that are fields of cls: what the record computed from them (failures,
    cpu_pct) and fields earlier versions had (late_with_free_connection) are left out; a field a record
    predates takes its default."""
    names = {f.name for f in fields(cls)}
    return {k: v for k, v in data.items() if k in names}


def usage_json(usage: LoadHostUsage | None) -> dict | None:
    """A load host's usage as a record writes it: the fields and the shares computed from them."""
    if usage is None:
        return None
    wait = usage.tool_cpu_wait_pct
    return {**asdict(usage), "cpu_pct": round(usage.cpu_pct, 1), "throttled_pct": round(usage.throttled_pct, 1),
            "tool_cpu_wait_pct": None if wait is None else round(wait, 1)}


# The percentiles of the latency spectrum, as HdrHistogram plots them: denser towards the tail.
SPECTRUM_PERCENTILES = (0, 10, 25, 50, 75, 90, 95, 99, 99.5, 99.9, 99.95, 99.99, 99.995, 99.999)


@dataclass
class StepResult:
    """What a driver measured in one step (units: requests/s, ms, s, epoch seconds)."""
    offered_rps: float
    duration_s: float
    connections: int
    achieved_rps: float
    responses: int
    latency_ms: dict[str, float]
    errors: dict[str, int]
    error_messages: dict[str, int]
    start_epoch: float
    end_epoch: float
    tool: Tool
    # Requests the generator meant to send, and sent (responses + socket errors); None where unknown.
    intended: int | None = None
    sent: int | None = None
    # Mean time from actual send to response (not corrected), where the tool tells it.
    mean_service_ms: float | None = None
    # From due to actually sent (waiting for a free connection, or a generator behind), where the tool tells it.
    send_lag_ms_p99: float | None = None
    # Requests due in the step with neither a response nor an error at its end (in flight, queued in the
    # generator, never sent); they are in the latency figures at their least possible age. None: unknown.
    unanswered: int | None = None
    # The generator's own schedule: requests it handed out more than GENERATOR_LATE_MS after they were due, and the
    # p99 of that lag (ms), lower bounds (oha, from its per-request rows); None where the tool cannot tell.
    behind_schedule: int | None = None
    schedule_lag_ms_p99: float | None = None
    # The corrected p99 with the generator's own lag taken out (oha): what the server alone would have shown. A
    # step that fails the SLO only because of that lag measured the generator (load/step.py).
    p99_without_generator_lag_ms: float | None = None
    # [second of the step, responses due in it, their p99 ms] (unanswered ones in the second they were due at
    # the latest), where the tool gives per-request times: how the step's latency moved within it.
    latency_by_second: list[list[float]] = field(default_factory=list)
    # The verdict's latency (latency_ms) leaves out the requests due in the step's first ramp_s seconds (the
    # harness's own start-up: connections opened, pools grown; their p99 is ramp_p99_ms) and its steady part
    # is cut into windows with a p99 each (load/drivers/latency.py); empty where the tool cannot tell.
    ramp_s: float = 0.0
    ramp_p99_ms: float | None = None
    window_p99_ms: list[float | None] = field(default_factory=list)
    loadhost: LoadHostUsage | None = None
    notes: list[str] = field(default_factory=list)
    # [percentile, ms] pairs of the corrected latency, SPECTRUM_PERCENTILES then [100, max] (the report's
    # percentile plot); empty where the tool gives none.
    latency_spectrum_ms: list[list[float]] = field(default_factory=list)
    # Each load host's share, in the order of LOAD_HOSTS; with several, `loadhost` is the busiest one's and the
    # figures above are all of theirs merged (load/drivers/merge.py).
    generators: list[Generator] = field(default_factory=list)

    @classmethod
    def from_json(cls, data: dict) -> StepResult:
        """From a step record's line, where the result's fields sit beside the step's."""
        return cls(**{**known(cls, data), "tool": Tool.from_json(data["tool"]),
                      "loadhost": LoadHostUsage.from_json(data.get("loadhost")),
                      "generators": [Generator.from_json(g) for g in data.get("generators") or []]})

    @property
    def failures(self) -> int:
        return sum(self.errors.values())

    @property
    def failure_pct(self) -> float:
        """Failures as a share of all requests that got an answer or an error."""
        attempts = self.responses + socket_errors(self.errors)
        return 100.0 * self.failures / attempts if attempts else 100.0

    @property
    def achieved_pct(self) -> float:
        return 100.0 * self.achieved_rps / self.offered_rps if self.offered_rps else 0.0


def empty_errors() -> dict[str, int]:
    return {kind: 0 for kind in ERROR_KINDS}


def socket_errors(errors: dict[str, int]) -> int:
    """Requests that got no response at all."""
    return sum(errors[kind] for kind in SOCKET_ERROR_KINDS)


@dataclass
class StepRecord:
    """One line of steps.jsonl: where and when a step ran, what it measured, and its verdict."""
    run_id: str
    step: int
    phase: str  # warmup, a SEARCH_PHASES one, evidence, selfcheck, usl, failover, before, overload, recovery
    target: str  # node1..3, cluster, or lb (self-check)
    repeat: int
    url: str
    scenario: str
    result: StepResult
    valid: bool
    invalid_reason: str | None
    passed: bool
    slo_broken: list[str]
    label: str = ""  # the search it belongs to, e.g. "node1", "cluster v2", "node1 monitor on"
    # Its windows disagreed on the p99 bound (some met it, some not): a transient decided the step's p99.
    unsteady: bool = False
    # Added after the run to the steps PCP logged (metrics/export.py): per host, the figures of
    # metrics/catalogue.py by name (requests_cross_check per node); None: not logged.
    host_metrics: dict[str, dict] | None = None
    metrics_window: dict[str, float] | None = None  # start_epoch, end_epoch of the figures' window

    def to_json(self) -> dict:
        data = {k: v for k, v in asdict(self).items()
                if v is not None or k not in ("host_metrics", "metrics_window")}
        result = data.pop("result")
        result["loadhost"] = usage_json(self.result.loadhost)
        for written, generator in zip(result["generators"], self.result.generators):
            written["loadhost"] = usage_json(generator.loadhost)
        result["failures"] = self.result.failures
        result["failure_pct"] = round(self.result.failure_pct, 3)
        result["achieved_pct"] = round(self.result.achieved_pct, 2)
        return {"schema": STEP_SCHEMA, **data, **result}

    @classmethod
    def from_json(cls, data: dict) -> StepRecord:
        return cls(**{**known(cls, data), "result": StepResult.from_json(data)})


def read_steps(path: Path) -> list[StepRecord]:
    """steps.jsonl's records, in the order written (a damaged line is reported and skipped: jsonl.read)."""
    return [StepRecord.from_json(line) for line in jsonl.read(path)]


