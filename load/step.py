"""A step's verdict: valid (the generator kept its schedule) and passed (the SLO held). Every driver returns the
same StepResult (rundata/records.py); the harness adds where and when it ran (StepRecord) and judges it here."""
from __future__ import annotations

from load.settings import Slo
from rundata.records import GENERATOR_BEHIND_PCT, GENERATOR_CPU_PCT, StepRecord, StepResult


def generator_problem(result: StepResult, passed: bool) -> str | None:
    """Why the load host could not send at the offered rate, or None when it could: its CPU was used up, its
    CPU quota held it back in more than GENERATOR_BEHIND_PCT of the periods, or (on a step that passed) the
    generator's own schedule (oha) shows it handed out more than GENERATOR_BEHIND_PCT of the intended requests
    late. A busy server delays sends too, but only the send, not the schedule, which stays the server's, in the
    corrected latency. oha measures latency from when it handed a request out, so its own lag can only make a
    step look better than the truth: a step that failed even so failed (and on a machine whose cores the nodes
    share, an overloaded step starves the generator too: that is the server's overload, not a bad step)."""
    usage = result.loadhost
    if usage is not None and usage.cpu_pct >= GENERATOR_CPU_PCT:
        return (f"load host CPU {usage.cpu_pct:.0f}% of its {usage.cpus_available:g} CPUs "
                f"(limit {GENERATOR_CPU_PCT:.0f}%)")
    if usage is not None and usage.throttled_pct > GENERATOR_BEHIND_PCT:
        return (f"the load host's CPU quota ({usage.cpus_available:g} CPUs) throttled it in "
                f"{usage.throttled_periods} of {usage.quota_periods} periods ({usage.throttled_pct:.0f}%, limit "
                f"{GENERATOR_BEHIND_PCT:g}%)")
    behind, intended = result.behind_schedule, result.intended
    if passed and behind and intended:
        share = 100.0 * behind / intended
        if share > GENERATOR_BEHIND_PCT:
            waited = (f", its threads waited for a CPU {usage.tool_cpu_wait_pct:.0f}% of the time they could run"
                      if usage is not None and usage.tool_cpu_wait_pct is not None else "")
            return (f"the generator sent {behind} of {intended} requests ({share:.1f}%, limit "
                    f"{GENERATOR_BEHIND_PCT:g}%) behind its own schedule (p99 {result.schedule_lag_ms_p99:g} ms "
                    f"late){waited}")
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
    broken = slo_failures(result, slo)
    problem = generator_problem(result, passed=not broken)
    return StepRecord(run_id=run_id, step=step, phase=phase, target=target, repeat=repeat, url=url,
                      scenario=scenario, result=result, valid=problem is None, invalid_reason=problem,
                      passed=problem is None and not broken, slo_broken=broken)
