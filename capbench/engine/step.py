"""A step's verdict: valid (the generator kept its schedule) and passed (the SLO held). Every driver returns the
same StepResult (capbench/rundata/records.py); the harness adds where and when it ran (StepRecord) and judges it here."""
from __future__ import annotations

from capbench.rundata.records import GENERATOR_BEHIND_PCT, GENERATOR_CPU_PCT, GENERATOR_LATE_MS, StepRecord, StepResult
from capbench.settings.bench import Slo


def generator_problem(result: StepResult, slo: Slo) -> str | None:
    """Why the load host, not the server, decided the step, or None: its CPU was used up; its CPU quota held it
    back in more than GENERATOR_BEHIND_PCT of the periods; or (oha) the step broke the SLO on its p99 only, and
    only with the generator's own lag behind its schedule in the latency: without that lag the p99 held. The
    latency runs from the schedule, so the generator's lag can only make the server look worse: a pass stands,
    and so does a failure that holds without the lag (on a machine whose cores the nodes share, an overloaded
    node starves the generator too: that is the server's overload). With several load hosts each one's CPU and
    quota is checked and the reason names it; the lag's rule reads their merged figures."""
    several = len(result.generators) > 1
    checked = [(f"{g.host}: ", g.loadhost) for g in result.generators] if several else [("", result.loadhost)]
    for name, usage in checked:
        if usage is not None and usage.cpu_pct >= GENERATOR_CPU_PCT:
            return (f"{name}load host CPU {usage.cpu_pct:.0f}% of its {usage.cpus_available:g} CPUs "
                    f"(limit {GENERATOR_CPU_PCT:.0f}%)")
        if usage is not None and usage.throttled_pct > GENERATOR_BEHIND_PCT:
            return (f"{name}the load host's CPU quota ({usage.cpus_available:g} CPUs) throttled it in "
                    f"{usage.throttled_periods} of {usage.quota_periods} periods ({usage.throttled_pct:.0f}%, "
                    f"limit {GENERATOR_BEHIND_PCT:g}%)")
    usage = result.loadhost
    p99, without_lag = result.latency_ms.get("p99"), result.p99_without_generator_lag_ms
    broken = slo_failures(result, slo)
    if (without_lag is not None and p99 is not None and len(broken) == 1 and p99 > slo.p99_ms
            and without_lag <= slo.p99_ms):
        waited = (f"; its threads waited for a CPU {usage.tool_cpu_wait_pct:.0f}% of the time they could run"
                  if usage is not None and usage.tool_cpu_wait_pct is not None else "")
        behind = ("; behind: " + ", ".join(f"{g.host} {g.behind_schedule}" for g in result.generators)
                  if several else "")
        return (f"p99 {p99:g} ms > {slo.p99_ms:g} ms only with the generator's own lag behind its schedule: "
                f"without it {without_lag:g} ms ({result.behind_schedule} of {result.intended} requests handed "
                f"out over {GENERATOR_LATE_MS:g} ms late, p99 {result.schedule_lag_ms_p99:g} ms){behind}{waited}")
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
    problem = generator_problem(result, slo)
    windows = [p99 <= slo.p99_ms for p99 in result.window_p99_ms if p99 is not None]
    return StepRecord(unsteady=len(set(windows)) > 1,run_id=run_id, step=step, phase=phase, target=target, repeat=repeat, url=url,
                      scenario=scenario, result=result, valid=problem is None, invalid_reason=problem,
                      passed=problem is None and not broken, slo_broken=broken)
