"""make bench-selfcheck: does the generator keep the offered rate? One step on a trivial endpoint (HAProxy's own
/lb-health) at SELFCHECK_RATE, judged within SELFCHECK_TOLERANCE_PCT, with what it cost the load host."""
from __future__ import annotations

from dataclasses import dataclass

from capbench.engine.kind import Kind, KindSettings, Needs, Outcome
from capbench.engine.progress import say
from capbench.hosts.balancer_address import own_answer_url
from capbench.rundata.findings import Findings
from capbench.rundata.history import read_history
from capbench.rundata.layout import history_path
from capbench.rundata.records import doc
from capbench.settings.fields import auto_or, number, setting

DEFAULT_RATE = 4000.0
TOLERANCE_PCT = 1.0


def url() -> str:
    """HAProxy's own answer, over the client's TLS where the balancer ends it (clear text where TLS=node passes it
    through: capbench/hosts/balancer_address.py)."""
    return own_answer_url("/lb-health")


@dataclass(frozen=True)
class SelfcheckSettings(KindSettings):
    selfcheck_rate: float | None = setting(
        "SELFCHECK_RATE", "auto", auto_or(number(0, 1_000_000, low_open=True)),
        "the rate at which the generator proves it keeps up, on a trivial endpoint; auto: twice the highest "
        "cluster capacity in results/ (4000/s before any)")


@dataclass
class SelfcheckFindings(Findings):
    """bench-selfcheck: whether the generator kept the offered rate, and what it cost the load host."""
    kind = "selfcheck"
    offered_rps: float | None = doc("the rate offered", default=None)
    achieved_rps: float | None = doc("the rate achieved", default=None)
    achieved_pct: float | None = doc("achieved / offered, %", default=None)
    within_tolerance: bool = doc("achieved within tolerance_pct of offered", default=False)
    tolerance_pct: float = doc("the tolerance", default=TOLERANCE_PCT)
    valid: bool = doc("the step is valid (records.py: the generator kept its schedule)", default=False)
    invalid_reason: str | None = doc("why not", default=None)
    p99_ms: float | None = doc("the corrected p99", default=None)
    send_lag_ms_p99: float | None = doc("p99 of how late requests were sent", default=None)
    behind_schedule: int | None = doc("requests sent behind their schedule", default=None)
    unanswered: int | None = doc("requests never answered", default=None)
    tool_cpu_wait_pct: float | None = doc("the generator's CPU wait, %", default=None)
    loadhost_cpu_pct: float | None = doc("the load host's CPU, % of its CPUs", default=None)
    loadhost_cpu_cores: float | None = doc("the load host's CPU, cores", default=None)
    loadhost_cpus: float | None = doc("the CPUs the load host may use", default=None)
    passed: bool = doc("within tolerance, valid, and no failure: the generator keeps up", default=False)


def default_rate(own: SelfcheckSettings) -> float:
    """SELFCHECK_RATE, or twice the highest cluster capacity any complete run in the history recorded."""
    if own.selfcheck_rate is not None:
        return own.selfcheck_rate
    best = max((line.cluster_rps or 0.0 for line in read_history(history_path())[0]
                if line.kind == "cluster" and line.status == "complete"), default=0.0)
    return 2 * best if best else DEFAULT_RATE


class Selfcheck(Kind):
    name = "selfcheck"
    description = "the generator keeps the offered rate on a trivial endpoint (SELFCHECK_RATE=)"
    targets = ("lb",)
    needs = Needs(restores_rotation=False,  # it never changes the rotation
                  users=False,  # one trivial URL of HAProxy's own
                  reports=False)
    own_settings = SelfcheckSettings
    findings = SelfcheckFindings

    def planned_searches(self, settings) -> int:
        return 1

    def run(self, bench, found: SelfcheckFindings) -> Outcome:
        found.update(self.check(bench, default_rate(self.own(bench.settings))))
        bench.searcher.searches["lb"] = [{"status": "selfcheck", "capacity_rps": None}]
        if found.passed:
            return "complete", None, 0
        return "failed", "the generator did not keep the offered rate", 1

    @staticmethod
    def check(bench, rate: float) -> dict:
        record = bench.steps.measure("lb", 1, rate, "selfcheck", url=url(),
                                     duration_s=max(bench.settings.step_s, bench.driver.min_step_s))
        r = record.result
        within = abs(r.achieved_pct - 100) <= TOLERANCE_PCT
        usage = r.loadhost
        verdict = {"offered_rps": rate, "achieved_rps": r.achieved_rps, "achieved_pct": round(r.achieved_pct, 2),
                   "within_tolerance": within, "tolerance_pct": TOLERANCE_PCT, "valid": record.valid,
                   "invalid_reason": record.invalid_reason, "p99_ms": r.latency_ms.get("p99"),
                   "send_lag_ms_p99": r.send_lag_ms_p99, "behind_schedule": r.behind_schedule,
                   "unanswered": r.unanswered,
                   "tool_cpu_wait_pct": round(usage.tool_cpu_wait_pct, 1) if usage and usage.tool_cpu_wait_pct
                   is not None else None,
                   "loadhost_cpu_pct": round(usage.cpu_pct, 1) if usage else None,
                   "loadhost_cpu_cores": round(usage.cpu_seconds / usage.wall_seconds, 3) if usage else None,
                   "loadhost_cpus": usage.cpus_available if usage else None,
                   "passed": within and record.valid and r.failures == 0}
        say(f"self-check at {rate:g}/s on {url()}: achieved {r.achieved_rps:g}/s "
            f"({r.achieved_pct:.2f}% of offered, allowed ±{TOLERANCE_PCT:g}%), failures {r.failures}, "
            f"load host CPU {verdict['loadhost_cpu_cores']} cores = {verdict['loadhost_cpu_pct']}% of its "
            f"{verdict['loadhost_cpus']:g} CPUs → {'generator keeps up' if verdict['passed'] else 'NOT OK'}")
        return verdict


KIND = Selfcheck()
