"""make bench-usl: node1's throughput and mean latency at each closed-loop concurrency of USL_LEVELS (no think
time), one step each after an open-loop warm-up, and the Universal Scalability Law fitted to them
(capbench/analysis/usl_fit.py): σ, κ, λ, N*, R²."""
from __future__ import annotations

import time
from dataclasses import asdict, dataclass

from capbench.engine.console import print_usl_fit
from capbench.engine.kind import Kind, KindSettings, Needs, Showing
from capbench.report.sections import ReportSection
from capbench.rundata.findings import Findings
from capbench.rundata.history import usl_figures
from capbench.rundata.records import doc
from capbench.settings.bench import MAX_CONNECTIONS
from capbench.settings.fields import levels, setting

# The USL has three unknowns: fewer levels leave nothing to judge its fit by (capbench/analysis/usl_fit.py).
MIN_LEVELS = 4


@dataclass(frozen=True)
class UslSettings(KindSettings):
    usl_levels: tuple[int, ...] = setting(
        "USL_LEVELS", "1 2 4 8 16 32", levels(MIN_LEVELS, MAX_CONNECTIONS),
        "node1's closed-loop concurrencies (connections that each send the next request as soon as the last is "
        "answered), one step each", quick="1 2 4 8")


@dataclass
class UslPoint:
    """One closed-loop step of the sweep."""
    n: int = doc("its concurrency: connections each sending the next request as soon as the last is answered")
    throughput_rps: float = doc("X, the requests answered a second")
    mean_latency_ms: float | None = doc("R, the mean service time", default=None)
    step: int = doc("its step number", default=0)
    valid: bool = doc("the step is valid (the generator kept up)", default=True)


@dataclass
class UslFindings(Findings):
    """bench-usl: node1's throughput by concurrency and the USL fitted to it."""
    kind = "usl"
    points: list[UslPoint] = doc("the sweep's valid points with some throughput", default_factory=list)
    fit: dict = doc("the fit (capbench/analysis/usl_fit.py, UslFit.as_dict), or why there is none: error, failed (the "
                    "fit itself failed rather than being refused)", default_factory=dict)
    # Every step, kept as the run goes (a run that breaks off keeps what it measured); the valid ones are points.
    measured: list[UslPoint] = doc("every step of the sweep, valid or not", default_factory=list)

    @classmethod
    def earlier(cls, summary: dict) -> dict | None:
        """Before it had a section of its own its points and fit were at summary.json's top level."""
        if "usl" in summary or "usl_points" not in summary:
            return None
        return {"points": summary["usl_points"], "fit": summary.get("usl_fit") or {}}

    def usl(self) -> tuple[str, list[dict], dict] | None:
        """The shared USL section's points and the fit the run made."""
        return ("closed connections on node1", [asdict(p) for p in self.points], self.fit) if self.points else None


def usl_fit(points: list[dict]) -> dict:
    """The USL fitted to the sweep's valid points, or why it could not be: refused (too few points, `failed`
    false) or failed (the fit itself, `failed` true). Nothing escapes: the points are measured and on disk, and
    their summary is written whatever the fit does."""
    from capbench.analysis import usl_fit  # numpy and scipy only when fitting
    try:
        fit = usl_fit.fit([p["n"] for p in points], [p["throughput_rps"] for p in points])
    except usl_fit.UslFitFailed as problem:
        return {"error": str(problem), "failed": True}
    except usl_fit.UslError as problem:
        return {"error": str(problem), "failed": False}
    except Exception as problem:  # noqa: BLE001 — whatever else breaks in the fit is recorded as its failure
        return {"error": f"the fit failed ({type(problem).__name__}: {problem})", "failed": True}
    return fit.as_dict()


class UslShown(Showing):
    """How bench-usl shows what it found (capbench/engine/kind.py's Showing)."""
    section = ReportSection(usl=lambda summary: summary.findings(UslFindings).usl())

    def history(self, found: UslFindings) -> dict:
        return {"usl": usl_figures(found.fit)}

    def console(self, summary: dict, found: UslFindings) -> None:
        print(f"\n{'connections':>11}{'X /s':>10}{'X/N /s':>9}{'mean ms':>9}{'N = X·R':>9}   (closed loop, node1)")
        for p in found.points:
            little = f"{p.throughput_rps * p.mean_latency_ms / 1000:.1f}" if p.mean_latency_ms else "-"
            print(f"{p.n:>11}{p.throughput_rps:>10.1f}{p.throughput_rps / p.n:>9.1f}"
                  f"{p.mean_latency_ms if p.mean_latency_ms is not None else '-':>9}{little:>9}")
        print_usl_fit(found.fit)


class Usl(Kind):
    name = "usl"
    description = "node1's throughput at closed-loop concurrencies USL_LEVELS= and the USL fit (σ, κ, N*, R²)"
    targets = ("node1",)
    needs = Needs(closed_loop=True)
    own_settings = UslSettings
    findings = UslFindings
    shows = UslShown()

    def steps_per_search(self, settings) -> int:
        return len(self.own(settings).usl_levels)

    def run(self, bench, found: UslFindings) -> None:
        s = bench.settings
        bench.route("node1")
        time.sleep(bench.steps.SETTLE_AFTER_PASS_S)
        if s.warmup_s > 0:
            bench.steps.measure("node1", 0, round(s.start_rate / 2, 1), "warmup",
                                duration_s=max(s.warmup_s, bench.driver.min_step_s))
        for level in self.own(s).usl_levels:
            record = bench.steps.measure("node1", 1, 0, "usl", closed_connections=level)
            found.measured.append(UslPoint(level, record.result.achieved_rps, record.result.mean_service_ms,
                                           record.step, record.valid))

    def summarize(self, bench, summary: dict, found: UslFindings) -> None:
        found.points = [p for p in found.measured if p.valid and p.throughput_rps > 0]
        found.fit = usl_fit([asdict(p) for p in found.points])




KIND = Usl()
