"""One step: a constant-rate measurement from the load host, and its verdict against the SLO.

Every driver returns the same StepResult; the harness adds where and when it ran (StepRecord) and judges it.
Latencies are corrected for coordinated omission: measured from when each request was meant to be sent.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass, field

from load.settings import Slo

# The study counts a response slower than this as a failure, whatever its status.
SLOW_MS = 5000.0
ERROR_KINDS = ("connect", "read", "write", "timeout", "status", "slow", "other")
# The kinds where no response came back (status and slow ones did get a response).
SOCKET_ERROR_KINDS = ("connect", "read", "write", "timeout", "other")
PERCENTILES = ("p50", "p90", "p99", "p99.9", "max")
# A generator that sent more than this share of its requests late although a connection was free fell
# behind on its own: the step measures the generator, not the server. A generator that cannot keep up lags on
# most requests; 1.4 % were seen once at a quarter of a node's capacity, in a server stall right after an
# overloaded step, with the load host at 4 % CPU (the self-check keeps 10x that rate exactly): too transient
# to call the generator the bottleneck, so the bound is 5 %.
MAX_LATE_WITH_FREE_CONNECTION_PCT = 5.0
# The load host's CPU at or above this share of what it may use: the generator itself is saturated.
MAX_LOADHOST_CPU_PCT = 90.0


@dataclass
class Tool:
    name: str
    version: str
    argv: list[str]


@dataclass
class LoadHostUsage:
    """CPU of the load host over the step (its cgroup, or the whole machine on a VM)."""
    cpu_seconds: float
    wall_seconds: float
    cpus_available: float

    @property
    def cpu_pct(self) -> float:
        """Share of the CPU the load host may use, in percent."""
        if self.wall_seconds <= 0 or self.cpus_available <= 0:
            return 0.0
        return 100.0 * self.cpu_seconds / (self.wall_seconds * self.cpus_available)


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
    # Responses sent late although a connection was free when they were due (oha: from its per-request rows).
    late_with_free_connection: int | None = None
    loadhost: LoadHostUsage | None = None
    notes: list[str] = field(default_factory=list)
    # [percentile, ms] pairs of the corrected latency, SPECTRUM_PERCENTILES then [100, max] (the report's
    # percentile plot); empty where the tool gives none.
    latency_spectrum_ms: list[list[float]] = field(default_factory=list)

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


def generator_problem(result: StepResult) -> str | None:
    """Why the load host could not send at the offered rate, or None when it could."""
    usage = result.loadhost
    if usage is not None and usage.cpu_pct >= MAX_LOADHOST_CPU_PCT:
        return (f"load host CPU {usage.cpu_pct:.0f}% of its {usage.cpus_available:g} CPUs "
                f"(limit {MAX_LOADHOST_CPU_PCT:.0f}%)")
    if result.late_with_free_connection and result.responses:
        share = 100.0 * result.late_with_free_connection / result.responses
        if share > MAX_LATE_WITH_FREE_CONNECTION_PCT:
            return (f"{result.late_with_free_connection} requests ({share:.1f}%) went out late although a "
                    f"connection was free (sent {result.sent} of {result.intended} intended)")
    return None


def slo_failures(result: StepResult, slo: Slo) -> list[str]:
    """The SLO conditions this step broke, each with the figures; empty when it passed."""
    broken = []
    if result.failure_pct > slo.failure_pct:
        kinds = ", ".join(f"{k} {v}" for k, v in result.errors.items() if v) or "no response at all"
        broken.append(f"failures {result.failure_pct:.2f}% > {slo.failure_pct:g}% ({kinds})")
    p99 = result.latency_ms.get("p99")
    if p99 is None or p99 > slo.p99_ms:
        broken.append(f"p99 {p99 if p99 is None else round(p99, 1)} ms > {slo.p99_ms:g} ms")
    if result.achieved_pct < slo.achieved_pct:
        broken.append(f"achieved {result.achieved_rps:.1f}/s = {result.achieved_pct:.1f}% of offered "
                      f"< {slo.achieved_pct:g}%")
    return broken


@dataclass
class StepRecord:
    """One line of steps.jsonl: where and when a step ran, what it measured, and its verdict."""
    run_id: str
    step: int
    phase: str  # warmup | search | confirm | selfcheck
    target: str  # node1..3, cluster, or lb (self-check)
    repeat: int
    url: str
    scenario: str
    result: StepResult
    valid: bool
    invalid_reason: str | None
    passed: bool
    slo_broken: list[str]

    def to_json(self) -> dict:
        data = asdict(self)
        result = data.pop("result")
        usage = self.result.loadhost
        result["loadhost"] = None if usage is None else {**asdict(usage), "cpu_pct": round(usage.cpu_pct, 1)}
        result["failures"] = self.result.failures
        result["failure_pct"] = round(self.result.failure_pct, 3)
        result["achieved_pct"] = round(self.result.achieved_pct, 2)
        return {**data, **result}


def judge(run_id: str, step: int, phase: str, target: str, repeat: int, url: str, scenario: str,
          result: StepResult, slo: Slo) -> StepRecord:
    """A step is invalid when the generator fell behind; only a valid step can pass."""
    problem = generator_problem(result)
    broken = slo_failures(result, slo)
    return StepRecord(run_id=run_id, step=step, phase=phase, target=target, repeat=repeat, url=url,
                      scenario=scenario, result=result, valid=problem is None, invalid_reason=problem,
                      passed=problem is None and not broken, slo_broken=broken)
