"""make bench-usl: node1's throughput and mean latency at each closed-loop concurrency of USL_LEVELS (no think
time), one step each after an open-loop warm-up, and the Universal Scalability Law fitted to them
(analysis/usl_fit.py): σ, κ, λ, N*, R²."""
from __future__ import annotations

import time
from dataclasses import dataclass

from engine.console import print_usl_fit
from engine.kind import Kind, KindSettings
from settings.bench import MAX_CONNECTIONS
from settings.fields import levels, setting

# The USL has three unknowns: fewer levels leave nothing to judge its fit by (analysis/usl_fit.py).
MIN_LEVELS = 4


@dataclass(frozen=True)
class UslSettings(KindSettings):
    usl_levels: tuple[int, ...] = setting(
        "USL_LEVELS", "1 2 4 8 16 32", levels(MIN_LEVELS, MAX_CONNECTIONS),
        "node1's closed-loop concurrencies (connections that each send the next request as soon as the last is "
        "answered), one step each", quick="1 2 4 8")


def usl_fit(points: list[dict]) -> dict:
    """The USL fitted to the sweep's valid points, or why it could not be: refused (too few points, `failed`
    false) or failed (the fit itself, `failed` true). Nothing escapes: the points are measured and on disk, and
    their summary is written whatever the fit does."""
    from analysis import usl_fit  # numpy and scipy only when fitting
    try:
        fit = usl_fit.fit([p["n"] for p in points], [p["throughput_rps"] for p in points])
    except usl_fit.UslFitFailed as problem:
        return {"error": str(problem), "failed": True}
    except usl_fit.UslError as problem:
        return {"error": str(problem), "failed": False}
    except Exception as problem:  # noqa: BLE001 — whatever else breaks in the fit is recorded as its failure
        return {"error": f"the fit failed ({type(problem).__name__}: {problem})", "failed": True}
    return fit.as_dict()


class Usl(Kind):
    name = "usl"
    description = "node1's throughput at closed-loop concurrencies USL_LEVELS= and the USL fit (σ, κ, N*, R²)"
    targets = ("node1",)
    closed_loop = True
    own_settings = UslSettings

    def steps_per_search(self, settings) -> int:
        return len(self.own(settings).usl_levels)

    def run(self, bench) -> None:
        s = bench.settings
        bench.route("node1")
        time.sleep(bench.steps.SETTLE_AFTER_PASS_S)
        if s.warmup_s > 0:
            bench.steps.measure("node1", 0, round(s.start_rate / 2, 1), "warmup",
                                duration_s=max(s.warmup_s, bench.driver.min_step_s))
        points = bench.findings.setdefault("usl_points", [])
        for level in self.own(s).usl_levels:
            record = bench.steps.measure("node1", 1, 0, "usl", closed_connections=level)
            points.append({"n": level, "throughput_rps": record.result.achieved_rps,
                           "mean_latency_ms": record.result.mean_service_ms, "step": record.step,
                           "valid": record.valid})

    def summarize(self, bench, summary: dict) -> None:
        points = bench.findings.get("usl_points", [])
        summary["usl_points"] = [p for p in points if p["valid"] and p["throughput_rps"] > 0]
        summary["usl_fit"] = usl_fit(summary["usl_points"])

    def console(self, summary: dict) -> None:
        print(f"\n{'connections':>11}{'X /s':>10}{'X/N /s':>9}{'mean ms':>9}{'N = X·R':>9}   (closed loop, node1)")
        for p in summary.get("usl_points", []):
            mean = p.get("mean_latency_ms")
            little = f"{p['throughput_rps'] * mean / 1000:.1f}" if mean else "-"
            print(f"{p['n']:>11}{p['throughput_rps']:>10.1f}{p['throughput_rps'] / p['n']:>9.1f}"
                  f"{mean if mean is not None else '-':>9}{little:>9}")
        print_usl_fit(summary.get("usl_fit") or {})


KIND = Usl()
