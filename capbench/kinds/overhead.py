"""make bench-overhead: what PCP costs the measurement. node1's capacity without monitoring and with it, in pairs
whose order alternates (off-on, on-off, ...: a drift of the machine does not favour one side), and the ratio
with/without, per pair and of the medians."""
from __future__ import annotations

import statistics
from dataclasses import dataclass

from capbench.engine.console import print_capacities
from capbench.engine.kind import Kind, Needs, Showing
from capbench.report.sections import ReportSection, RunResults, fragment_beside
from capbench.rundata.findings import Findings
from capbench.rundata.records import doc

GOAL = 0.98  # capacity with monitoring at least this share of the capacity without


@dataclass
class OverheadFindings(Findings):
    """bench-overhead: node1's capacity without monitoring and with it."""
    kind = "overhead"
    capacity_off_rps: float | None = doc("the median capacity without monitoring", default=None)
    capacity_on_rps: float | None = doc("the median capacity with PCP monitoring", default=None)
    ratio_on_over_off: float | None = doc("on / off of the medians", default=None)
    pair_ratios: list[float] = doc("on / off within each pair", default_factory=list)
    goal: float = doc("the ratio it should reach", default=GOAL)


def overhead_ratio(repeats: dict[str, list[float]]) -> dict:
    """Capacity with monitoring over capacity without it (each label's repeats): per pair, and of the medians."""
    off, on = repeats.get("node1 monitor off", []), repeats.get("node1 monitor on", [])
    pairs = [round(b / a, 3) for a, b in zip(off, on) if a and b]
    median_off = statistics.median(off) if off else None
    median_on = statistics.median(on) if on else None
    return {"capacity_off_rps": median_off, "capacity_on_rps": median_on,
            "ratio_on_over_off": round(median_on / median_off, 3) if median_off and median_on else None,
            "pair_ratios": pairs, "goal": GOAL}


# Its part of report.html (capbench/report/sections.py): the capacities with monitoring off and on. Its searches come in
# pairs measured for their ratio: no capacity figure each.
REPORT = fragment_beside(__file__)  # overhead.html, a Jinja2 fragment


def report_values(results: RunResults) -> dict:
    return {"overhead": results.findings(OverheadFindings)}


class OverheadShown(Showing):
    """How bench-overhead shows what it found (capbench/engine/kind.py's Showing)."""
    section = ReportSection((REPORT,), report_values, capacity_figures=False)

    def console(self, summary: dict, found: OverheadFindings) -> None:
        print_capacities(summary)
        print(f"\nmonitoring overhead: capacity off {found.capacity_off_rps}/s, on {found.capacity_on_rps}/s, "
              f"on/off = {found.ratio_on_over_off} (pairs {found.pair_ratios}; goal >= {found.goal})")


class Overhead(Kind):
    name = "overhead"
    description = "node1's capacity without and with PCP monitoring (REPEATS= pairs) and the ratio"
    shows = OverheadShown()
    findings = OverheadFindings
    targets = ("node1",)
    needs = Needs(logs_whole_run=False, always_monitored=True)  # it switches monitoring itself

    def planned_searches(self, settings) -> int:
        return 2 * settings.repeats

    def run(self, bench, found: OverheadFindings) -> None:
        for pair in range(bench.settings.repeats):
            for mode in (("off", "on") if pair % 2 == 0 else ("on", "off")):
                if mode == "on":
                    bench.monitoring.start()
                try:
                    bench.search("node1", label=f"node1 monitor {mode}", repeats=1)
                finally:
                    if mode == "on":
                        bench.monitoring.stop()

    def summarize(self, bench, summary: dict, found: OverheadFindings) -> None:
        found.update(overhead_ratio({label: t["repeats"] for label, t in summary["targets"].items()}))



KIND = Overhead()
