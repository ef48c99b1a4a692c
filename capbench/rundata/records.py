"""The run-record contract: what one step measured (StepResult, from a driver) and where, when and with what
verdict it ran (StepRecord, one line of steps.jsonl); readers read the lines back into these classes
(read_steps). docs/reference/records.md lists every field, generated from the classes.
Units: requests/s, ms, s, epoch seconds. Latencies are corrected for coordinated omission: measured from when
each request was meant to be sent."""
from __future__ import annotations

from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any

from capbench.rundata import jsonl

# Written into every step record and summary; raised when a field changes meaning or is removed.
STEP_SCHEMA = "capbench-step/2"
# The study counts a response slower than this as a failure, whatever its status.
SLOW_MS = 5000.0
ERROR_KINDS = ("connect", "read", "write", "timeout", "status", "slow", "other")
# The kinds where no response came back (status and slow ones did get a response).
SOCKET_ERROR_KINDS = ("connect", "read", "write", "timeout", "other")
# The phases of a capacity search's steps (capbench/search/capacity.py): grow, measure a first failure again, bisect,
# confirm or hold the capacity, vote at an unsteady knee, and measure again a step the load host made invalid.
SEARCH_PHASES = ("search", "recheck", "confirm", "hold", "repeat", "retry")
# Steps at a capacity already found, outside its search: thread dumps (bench-variants' evidence), and the profile's
# pair (capbench/engine/profile_step.py). No capacity figure is taken from them.
AT_CAPACITY_PHASES = ("evidence", "unprofiled", "profiled")
# A generator held back by its CPU quota in more than this share of the quota's periods, or (the report's hint)
# one that sent more than this share of the intended requests behind its own schedule, can move the p99 (the
# SLO's figure) by its own doing. The verdict (capbench/engine/step.py) and the report's hint read this one figure.
GENERATOR_BEHIND_PCT = 1.0
# A request handed out this much after its schedule said counts as behind it (the step record's behind_schedule).
GENERATOR_LATE_MS = 10.0
# The load host's CPU at or above this share of what it may use: the generator itself is saturated.
GENERATOR_CPU_PCT = 90.0


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


@dataclass
class Tool:
    """The load generator a step ran."""
    name: str = doc("oha or wrk2")
    version: str = doc("its version line")
    argv: list[str] = doc("its command line")

    @classmethod
    def from_json(cls, data: dict) -> Tool:
        return cls(**known(cls, data))


@dataclass
class LoadHostUsage:
    """CPU of the load host over the step (its cgroup, or the whole machine on a VM)."""
    cpu_seconds: float = doc("CPU time the load host used over the step")
    wall_seconds: float = doc("the step's wall time on the load host")
    cpus_available: float = doc("the CPUs it may use (its quota, or the machine's)")
    # Where the kernel's schedstat tells it: the generator's own threads on a CPU, and runnable but waiting for
    # one (no quota shows that wait: the cores shared with the nodes were busy).
    tool_cpu_seconds: float | None = doc("the generator's threads' time on a CPU", default=None)
    tool_cpu_wait_seconds: float | None = doc("the generator's threads' time runnable, waiting for a CPU",
                                              default=None)
    quota_periods: int = doc("the load host's CPU quota periods in the step (0 without a quota)", default=0)
    throttled_periods: int = doc("of those, the periods that used the quota up", default=0)

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
    host: str = doc("the load host")
    tool: str = doc("its generator's name and version")
    offered_rps: float = doc("the rate it was asked to send")
    connections: int = doc("its connections")
    achieved_rps: float = doc("responses a second it got")
    responses: int = doc("responses it got")
    failures: int = doc("its failed requests")
    unanswered: int | None = doc("its requests due with neither a response nor an error at the step's end")
    behind_schedule: int | None = doc("its requests handed out behind its schedule (oha)")
    start_skew_ms: float | None = doc("its start after the instant all were given (None: one generator)")
    loadhost: LoadHostUsage | None = doc("its load host's CPU")

    @classmethod
    def from_json(cls, data: dict) -> Generator:
        return cls(**{**known(cls, data), "loadhost": LoadHostUsage.from_json(data.get("loadhost"))})


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
    offered_rps: float = doc("the rate asked for (0: a closed loop)")
    duration_s: float = doc("the step's length")
    connections: int = doc("the generator's connections")
    achieved_rps: float = doc("responses a second")
    responses: int = doc("responses received")
    latency_ms: dict[str, float] = doc("corrected p50 p90 p99 p99.9 max, the ramp left out")
    errors: dict[str, int] = doc("failed requests by ERROR_KINDS")
    error_messages: dict[str, int] = doc("the tool's error messages, counted")
    start_epoch: float = doc("when the step started")
    end_epoch: float = doc("when it ended")
    tool: Tool = doc("the generator that ran it")
    intended: int | None = doc("requests the generator meant to send (rate × duration); None: unknown", default=None)
    sent: int | None = doc("requests sent (responses + socket errors); None: unknown", default=None)
    mean_service_ms: float | None = doc("mean time from actual send to response, not corrected", default=None)
    send_lag_ms_p99: float | None = doc("p99 from due to actually sent (a free connection, a generator behind)",
                                        default=None)
    # Unanswered requests (in flight, queued in the generator, never sent) are in the latency figures at their
    # least possible age.
    unanswered: int | None = doc("requests due in the step with neither a response nor an error at its end",
                                 default=None)
    # Lower bounds, from oha's per-request rows.
    behind_schedule: int | None = doc("requests the generator handed out more than GENERATOR_LATE_MS after they "
                                      "were due", default=None)
    schedule_lag_ms_p99: float | None = doc("the p99 of the generator's lag behind its schedule", default=None)
    # A step that fails the SLO only because of the generator's lag measured the generator (capbench/engine/step.py).
    p99_without_generator_lag_ms: float | None = doc("the corrected p99 with the generator's own lag taken out "
                                                     "(oha): what the server alone would have shown", default=None)
    latency_by_second: list[list[float]] = doc("[second, responses due in it, their p99 ms] (unanswered ones in "
                                               "the second they were due at the latest)", default_factory=list)
    # The ramp is the harness's own start-up (connections opened, pools grown): capbench/load/drivers/latency.py.
    ramp_s: float = doc("the first seconds, left out of latency_ms", default=0.0)
    ramp_p99_ms: float | None = doc("the p99 of the requests due in the ramp", default=None)
    window_p99_ms: list[float | None] = doc("the p99 of each window of the steady part", default_factory=list)
    loadhost: LoadHostUsage | None = doc("the load host's CPU (with several, the busiest one's)", default=None)
    notes: list[str] = doc("what the driver noticed", default_factory=list)
    latency_spectrum_ms: list[list[float]] = doc("[percentile, ms] of the corrected latency: SPECTRUM_PERCENTILES, "
                                                 "then [100, max]", default_factory=list)
    # With several load hosts the figures above are all of theirs merged (capbench/load/drivers/merge.py).
    generators: list[Generator] = doc("each load host's share, in the order of LOAD_HOSTS", default_factory=list)

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
    run_id: str = doc("the run it belongs to")
    step: int = doc("its number in the run, from 1")
    phase: str = doc("warmup, a SEARCH_PHASES one, evidence, unprofiled or profiled (AT_CAPACITY_PHASES), "
                     "selfcheck, usl, failover, before, overload, recovery, companion or common (a duet's)")
    target: str = doc("node1..N, cluster, or lb (self-check)")
    repeat: int = doc("the search's repeat")
    url: str = doc("the URL requested (the scenario's base)")
    scenario: str = doc("session or single")
    result: StepResult = doc("what was measured (written beside the step's fields)")
    valid: bool = doc("the measurement can be trusted (the load host kept up)")
    invalid_reason: str | None = doc("why it cannot")
    passed: bool = doc("it met the SLO")
    slo_broken: list[str] = doc("which of the SLO's bounds it broke")
    label: str = doc("the search it belongs to, e.g. node1, cluster v2, node1 monitor on ('': from before labels)",
                     default="")
    # A transient decided the step's p99.
    unsteady: bool = doc("its windows disagreed on the p99 bound (some met it, some not)", default=False)
    host_metrics: dict[str, dict] | None = doc("added after the run where PCP logged it (capbench/metrics/export.py): per "
                                               "host, capbench/metrics/catalogue.py's figures by name, "
                                               "requests_cross_check per node", default=None)
    metrics_window: dict[str, float] | None = doc("start_epoch and end_epoch of host_metrics' window", default=None)
    scenario_file: str = doc("the name of the SCENARIO_FILE whose requests it sent ('': WORKLOAD's; its sha256 is "
                             "in run.json's settings)", default="")
    node_cpus: dict[str, float] | None = doc("the CPU quotas of nodes a kind gave other quotas than the profile's "
                                             "while it ran (a duet's twin slots), what their CPU % is counted "
                                             "against; absent: the profile's", default=None)
    client_leg: dict | None = doc("where TLS, HTTP/2 or a connection per request is on, the client's leg as the "
                                  "balancer counted it over the step (capbench/load/client_leg.py): protocol (h2, http/1.1 or mixed), tls, "
                                  "requests, h1_streams, h2_streams, connections, new_connections_per_s, "
                                  "h2_connections, streams_per_h2_connection; with TLS tls_handshakes, tls_resumed and "
                                  "tls_full_handshakes_per_s; where TLS=node passes TLS through, the connections "
                                  "alone (tls_ended_at: nodes; the rest None); absent: clear-text HTTP/1.1, or a "
                                  "step beside another on the balancer", default=None)

    def to_json(self) -> dict:
        data = {k: v for k, v in asdict(self).items()
                if v is not None or k not in ("host_metrics", "metrics_window", "node_cpus", "client_leg")}
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


