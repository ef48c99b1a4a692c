"""A step's verdict: valid (the generator kept its schedule) and passed (the SLO held). Every driver returns the
same StepResult (rundata/records.py); the harness adds where and when it ran (StepRecord) and judges it here."""
from __future__ import annotations

from load.settings import Slo
from rundata.records import StepRecord, StepResult

# A generator that sent more than this share of its requests late although a connection was free fell
# behind on its own: the step measures the generator, not the server. A generator that cannot keep up lags on
# most requests; 1.4 % were seen once at a quarter of a node's capacity, in a server stall right after an
# overloaded step, with the load host at 4 % CPU (the self-check keeps 10x that rate exactly): too transient
# to call the generator the bottleneck, so the bound is 5 %.
MAX_LATE_WITH_FREE_CONNECTION_PCT = 5.0
# The load host's CPU at or above this share of what it may use: the generator itself is saturated.
MAX_LOADHOST_CPU_PCT = 90.0


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


def judge(run_id: str, step: int, phase: str, target: str, repeat: int, url: str, scenario: str,
          result: StepResult, slo: Slo) -> StepRecord:
    """A step is invalid when the generator fell behind; only a valid step can pass."""
    problem = generator_problem(result)
    broken = slo_failures(result, slo)
    return StepRecord(run_id=run_id, step=step, phase=phase, target=target, repeat=repeat, url=url,
                      scenario=scenario, result=result, valid=problem is None, invalid_reason=problem,
                      passed=problem is None and not broken, slo_broken=broken)
