"""make bench-stress: overload, and the way back (the study's figure 5: throughput dips past saturation and
comes back when the load falls).

STRESS_TARGET (the cluster, or one node) runs three constant-rate steps back to back, with no pause and no
draining between them: STRESS_LOW × its capacity (measured first unless STRESS_CAPACITY is given) for
STRESS_BASE_S seconds, STRESS_HIGH × for STRESS_OVER_S, then STRESS_LOW × again for STRESS_RECOVER_S. HAProxy
logs every request meanwhile (LB_LOG_REQUESTS=1, capbench/hosts/haproxy_log.py), so the run has, second by second, what was
answered, what failed and how slowly. From these:

  overload    answered per second while overloaded (mean and lowest) against the capacity and the offered rate;
              the failures of each step by kind (the generator's and HAProxy's)
  recovery    from the moment the load fell, the time until RECOVERED_FOR_S seconds in a row have no failure,
              answer at least RECOVERED_ACHIEVED of the offered rate and keep HAProxy's p99 within the SLO"""
from __future__ import annotations

import gzip
from collections import Counter
from dataclasses import dataclass

from capbench.engine.kind import Kind, KindSettings, Needs, Showing, keep_analysis
from capbench.engine.progress import say
from capbench.hosts import haproxy_log
from capbench.hosts.backend import ClusterError
from capbench.report.sections import Figure, ReportSection, RunResults, fragment_beside
from capbench.rundata.findings import Findings
from capbench.rundata.records import doc
from capbench.settings.fields import auto_or, integer, node_choice, number, setting

RECOVERED_FOR_S = 5
RECOVERED_ACHIEVED = 0.9
PHASES = ("before", "overload", "recovery")


@dataclass(frozen=True)
class StressSettings(KindSettings):
    stress_target: str = setting("STRESS_TARGET", "cluster", node_choice(also=("cluster",)), "what is overloaded")
    stress_capacity: float | None = setting(
        "STRESS_CAPACITY", "auto", auto_or(number(0, 1_000_000, low_open=True)),
        "the target's capacity (requests/s) the rates are multiples of; auto: measured first")
    stress_low: float = setting("STRESS_LOW", "0.5", number(0, 1, low_open=True),
                                "× the capacity before and after the overload")
    stress_high: float = setting("STRESS_HIGH", "2", number(1, 10, low_open=True), "× the capacity during it")
    stress_base_s: int = setting("STRESS_BASE_S", "30", integer(5, 3600), "seconds before the overload", quick="10")
    stress_over_s: int = setting("STRESS_OVER_S", "60", integer(5, 3600), "seconds of overload")
    stress_recover_s: int = setting("STRESS_RECOVER_S", "60", integer(10, 3600), "seconds after it, to recover",
                                    quick="40")


def recovery_time(rows: list[dict], drop_s: float, low_rate: float, p99_slo_ms: float) -> float | None:
    """Seconds from the drop to the first second of RECOVERED_FOR_S healthy seconds in a row (None: never)."""
    healthy_since = None
    for row in rows:
        if row["t"] < int(drop_s):
            continue
        healthy = (row["failed"] == 0 and row["ok"] >= RECOVERED_ACHIEVED * low_rate
                   and row["p99_ms"] is not None and row["p99_ms"] <= p99_slo_ms)
        if not healthy:
            healthy_since = None
            continue
        healthy_since = row["t"] if healthy_since is None else healthy_since
        if row["t"] - healthy_since + 1 >= RECOVERED_FOR_S:
            return round(max(healthy_since - drop_s, 0.0), 1)
    return None


def analyze(requests: list[haproxy_log.Request], windows: dict[str, tuple[float, float]], rates: dict[str, float],
            capacity: float, p99_slo_ms: float) -> dict:
    """windows: each phase's (start, end) epochs; rates: each phase's offered rate."""
    start = windows["before"][0]
    end = windows["recovery"][1]
    rows = haproxy_log.per_second(requests, start, end)
    over_start, over_end = (t - start for t in windows["overload"])
    during = [r["ok"] for r in rows if over_start + 1 <= r["t"] < over_end - 1]  # whole seconds inside
    drop_s = windows["recovery"][0] - start
    phase_of = {}
    for phase, (a, b) in windows.items():
        for r in requests:
            if a <= r.received < b:
                phase_of[id(r)] = phase
    failed = [r for r in requests if r.failed]
    return {
        "capacity_rps": capacity, "rates_rps": rates,
        "phases_s": {phase: [round(a - start, 3), round(b - start, 3)] for phase, (a, b) in windows.items()},
        "overload_answered_mean_rps": round(sum(during) / len(during), 1) if during else None,
        "overload_answered_min_rps": min(during) if during else None,
        "overload_over_capacity": round(sum(during) / len(during) / capacity, 3) if during and capacity else None,
        "failed": len(failed),
        "failed_by_phase": {phase: sum(1 for r in failed if phase_of.get(id(r)) == phase) for phase in PHASES},
        "failed_by_kind": dict(Counter(r.kind for r in failed).most_common()),
        "drop_s": round(drop_s, 3),
        "time_to_recover_s": recovery_time(rows, drop_s, rates["recovery"], p99_slo_ms),
        "recovered_means": f"{RECOVERED_FOR_S} s in a row with no failure, at least "
                           f"{RECOVERED_ACHIEVED:.0%} of the offered rate answered and HAProxy's p99 ≤ "
                           f"{p99_slo_ms:g} ms",
        "per_second": rows,
    }


def stress(bench) -> dict:
    """The analysis of an overload and the way back (kept in stress.json), after a search for the capacity if
    none given."""
    own = Stress.own(bench.settings)
    target = own.stress_target
    capacity = own.stress_capacity
    if capacity is None:
        bench.search(target, repeats=1)
        capacity = bench.capacity(target)
        if not capacity:
            raise ClusterError(f"no capacity was found for {target}: give STRESS_CAPACITY=")
    rates = {"before": round(capacity * own.stress_low, 1), "overload": round(capacity * own.stress_high, 1),
             "recovery": round(capacity * own.stress_low, 1)}
    say(f"stress on {target} (capacity {capacity:g}/s): {rates['before']:g}/s for {own.stress_base_s} s, "
        f"{rates['overload']:g}/s for {own.stress_over_s} s, {rates['recovery']:g}/s for {own.stress_recover_s} s")
    return bench.balancer.with_request_log(lambda: _stress_steps(bench, target, capacity, rates))


def _stress_steps(bench, target: str, capacity: float, rates: dict[str, float]) -> dict:
    s, own = bench.settings, Stress.own(bench.settings)
    bench.route(target)
    if own.stress_capacity is not None:  # no search ran before: warm the JVMs up as a search's warm-up does
        bench.steps.measure(target, 0, rates["before"] / 2, "warmup", label="stress",
                            duration_s=max(s.warmup_s, bench.driver.min_step_s))
    durations = {"before": own.stress_base_s, "overload": own.stress_over_s, "recovery": own.stress_recover_s}
    windows, records = {}, {}
    for phase in PHASES:
        record = bench.steps.measure(target, 1, rates[phase], phase, label="stress", duration_s=durations[phase],
                                     settle=False)
        windows[phase] = (record.result.start_epoch, record.result.end_epoch)
        records[phase] = record
    ring = haproxy_log.read_ring(haproxy_log.REQUESTS_RING)
    (bench.paths.raw / "lb-requests.log.gz").write_bytes(gzip.compress(ring.encode()))
    start, end = windows["before"][0], windows["recovery"][1]
    requests = [r for r in haproxy_log.parse_requests(ring) if start <= r.received <= end]
    if not requests or requests[0].received > start + 1:
        say("warning: HAProxy's request ring did not hold the whole run (its oldest lines were overwritten)")
    analysis = analyze(requests, windows, rates, capacity, s.slo.p99_ms)
    analysis.update({"target": target, "generator": {
        phase: {"achieved_rps": round(r.result.achieved_rps, 1), "failures": r.result.failures,
                "errors": r.result.errors, "p99_ms": r.result.latency_ms.get("p99")} for phase, r in records.items()}})
    say(summary_line(analysis))
    return analysis


def summary_line(a: dict) -> str:
    back = f"{a['time_to_recover_s']:g} s" if a["time_to_recover_s"] is not None else "not within the step"
    over = (f"{a['overload_answered_mean_rps']:g}/s answered on average (lowest second "
            f"{a['overload_answered_min_rps']}/s)" if a["overload_answered_mean_rps"] is not None else "no whole second")
    generator = a["generator"]["overload"] if "overload" in a["generator"] else None
    # HAProxy sees only what the generator's connections carry: requests a fixed population of users could not
    # send yet wait at the generator, which charges that wait to their latency (and counts them slow).
    waited = f"; the generator: {generator['failures']} failed in the overload step" if generator else ""
    return (f"stress: overload at {a['rates_rps']['overload']:g}/s: {over} against a capacity of "
            f"{a['capacity_rps']:g}/s; HAProxy: {a['failed']} failed ({a['failed_by_phase']}){waited}; recovered "
            f"{back} after the load fell")


@dataclass
class StressFindings(Findings):
    """bench-stress: the overload and the way back, from HAProxy's log of every request (its per-second
    series, per_second, whole in capbench/analysis/stress.json)."""
    kind = "stress"
    target: str | None = doc("what was overloaded", default=None)
    capacity_rps: float | None = doc("its capacity (the SLO's)", default=None)
    rates_rps: dict[str, float] = doc("each phase's offered rate: before, overload, recovery", default_factory=dict)
    phases_s: dict[str, list[float]] = doc("each phase's [start, end], s from the first", default_factory=dict)
    overload_answered_mean_rps: float | None = doc("answered a second while overloaded, mean", default=None)
    overload_answered_min_rps: float | None = doc("answered in its lowest second", default=None)
    overload_over_capacity: float | None = doc("the mean / the capacity", default=None)
    failed: int = doc("failed requests in HAProxy's log", default=0)
    failed_by_phase: dict[str, int] = doc("of those, per phase", default_factory=dict)
    failed_by_kind: dict[str, int] = doc("of those, per kind of failure", default_factory=dict)
    drop_s: float | None = doc("when the load fell, s from the first phase's start", default=None)
    time_to_recover_s: float | None = doc("from then until recovered (recovered_means); None: not within the run",
                                          default=None)
    recovered_means: str = doc("what recovered means, in words", default="")
    generator: dict[str, dict] = doc("per phase, the generator's count: achieved_rps, failures, errors, p99_ms",
                                     default_factory=dict)


# Its part of report.html (capbench/report/sections.py): the overload, what failed, the recovery.
REPORT = fragment_beside(__file__)  # stress.html, a Jinja2 fragment


def report_values(results: RunResults) -> dict:
    return {"stress": results.findings(StressFindings)}


def report_figures(results: RunResults) -> list[Figure]:
    from capbench.report import figures  # matplotlib only when a report is made
    analysis = results.analysis("stress")
    return [("overload and recovery", figures.stress(analysis, results.paths.figure("stress")))] if analysis else []


class StressShown(Showing):
    """How bench-stress shows what it found (capbench/engine/kind.py's Showing)."""
    section = ReportSection((REPORT,), report_values, report_figures)


class Stress(Kind):
    name = "stress"
    description = "0.5x capacity, 2x for 60 s, 0.5x again: throughput while overloaded, failures, time to recover"
    shows = StressShown()
    targets = ("cluster",)
    # overloaded nodes failing their checks is the point
    needs = Needs(flags_disturbances=False)
    own_settings = StressSettings
    findings = StressFindings

    def planned_searches(self, settings) -> int:
        return 0 if self.own(settings).stress_capacity else 1

    def run(self, bench, found: StressFindings) -> None:
        keep_analysis(bench, found, stress(bench), ("per_second",))


KIND = Stress()
