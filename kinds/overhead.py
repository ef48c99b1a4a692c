"""make bench-overhead: what PCP costs the measurement. node1's capacity without monitoring and with it, in pairs
whose order alternates (off-on, on-off, ...: a drift of the machine does not favour one side), and the ratio
with/without, per pair and of the medians."""
from __future__ import annotations

import statistics

from engine.console import print_capacities
from engine.kind import Kind
from report.sections import ReportSection

GOAL = 0.98  # capacity with monitoring at least this share of the capacity without


def overhead_ratio(targets: dict) -> dict:
    """Capacity with monitoring over capacity without it: per pair, and of the medians."""
    off = targets.get("node1 monitor off", {}).get("repeats", [])
    on = targets.get("node1 monitor on", {}).get("repeats", [])
    pairs = [round(b / a, 3) for a, b in zip(off, on) if a and b]
    median_off = statistics.median(off) if off else None
    median_on = statistics.median(on) if on else None
    return {"capacity_off_rps": median_off, "capacity_on_rps": median_on,
            "ratio_on_over_off": round(median_on / median_off, 3) if median_off and median_on else None,
            "pair_ratios": pairs, "goal": GOAL}


# Its part of report.html (report/sections.py): the capacities with monitoring off and on. Its searches come in
# pairs measured for their ratio: no capacity figure each.
REPORT = """{% if summary.overhead %}
<p class="big">Monitoring overhead: capacity off {{ summary.overhead.capacity_off_rps }}/s, on {{ summary.overhead.capacity_on_rps }}/s,
 on/off = <b>{{ summary.overhead.ratio_on_over_off }}</b> (pairs {{ summary.overhead.pair_ratios | join(", ") }}; goal ≥ {{ summary.overhead.goal }})</p>
{% endif %}
"""


class Overhead(Kind):
    name = "overhead"
    description = "node1's capacity without and with PCP monitoring (REPEATS= pairs) and the ratio"
    section = ReportSection(REPORT, capacity_figures=False)
    targets = ("node1",)
    logs_whole_run = False  # it switches monitoring itself
    always_monitored = True

    def planned_searches(self, settings) -> int:
        return 2 * settings.repeats

    def run(self, bench) -> None:
        for pair in range(bench.settings.repeats):
            for mode in (("off", "on") if pair % 2 == 0 else ("on", "off")):
                if mode == "on":
                    bench.monitoring.start()
                try:
                    bench.search("node1", label=f"node1 monitor {mode}", repeats=1)
                finally:
                    if mode == "on":
                        bench.monitoring.stop()

    def summarize(self, bench, summary: dict) -> None:
        summary["overhead"] = overhead_ratio(summary["targets"])

    def console(self, summary: dict) -> None:
        print_capacities(summary)
        o = summary["overhead"]
        print(f"\nmonitoring overhead: capacity off {o['capacity_off_rps']}/s, on {o['capacity_on_rps']}/s, "
              f"on/off = {o['ratio_on_over_off']} (pairs {o['pair_ratios']}; goal >= {o['goal']})")


KIND = Overhead()
