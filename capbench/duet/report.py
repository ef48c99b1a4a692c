"""A duet's part of report.html (capbench/report/sections.py) and of the console: the pairs' capacities and their
interval, the blocks' throughputs and theirs (the figure a duet gate judges), the common rate's figures."""
from __future__ import annotations

from capbench.analysis import duet_common
from capbench.duet.findings import DuetFindings
from capbench.report.sections import fragment_beside

REPORT = fragment_beside(__file__)  # report.html, a Jinja2 fragment


def report_values(results) -> dict:
    return {"duet": results.findings(DuetFindings)}


def report_figures(results):
    duet = results.findings(DuetFindings)
    if not (duet.pairs or duet.blocks):
        return []
    from capbench.report.duet_figure import duet as duet_figure  # matplotlib only when a report is made
    return [("B against A, pair by pair and block by block", duet_figure(duet, results.paths.figure("duet")))]


def shown(ratio: float | None) -> str:
    """A ratio to three decimals, or "-" where there is none (an unbounded side, a pair without a ratio)."""
    return "-" if ratio is None else f"{ratio:.3f}"


def console(duet: DuetFindings) -> None:
    if not duet.builds:
        return
    a, b = duet.builds
    print(f"\nduet: A = {a.text or 'as configured'}, B = {b.text or 'as configured'}")
    print(f"{'pair':>5}{'A slot':>8}{'A /s':>9}{'B slot':>8}{'B /s':>9}{'brackets':>10}{'same instants':>18}"
          f"{'B/A':>8}")
    for p in duet.pairs:  # a pair as Pair.as_dict writes it; earlier versions lacked the bracket and bounds
        ratio, middle = shown(p["ratio"]), shown(p.get("bracket_ratio"))
        k = p.get("same_instant")
        allowed = f"({shown(k['low'])}, {shown(k['high'])})" if k else "-"
        print(f"{p['pair']:>5}{p['a_slot']:>8}{p['a_rps'] or '-':>9}{p['b_slot']:>8}{p['b_rps'] or '-':>9}"
              f"{middle:>10}{allowed:>18}{ratio:>8}")
    if duet.interval:
        print(interval_line(duet.interval, "pairs", duet.slots))
    blocks_lines(duet)
    if duet.common:
        print("\n".join(duet_common.console_lines(duet.common)))


def blocks_lines(duet: DuetFindings) -> None:
    if not duet.blocks or duet.block_plan is None:
        return
    plan = duet.block_plan
    print(f"\n{'block':>5}{'A slot':>8}{'A /s':>9}{'B slot':>8}{'B /s':>9}{'spread':>9}{'B/A':>8}   "
          f"({plan.windows} windows of {plan.window_s} s, {plan.connections} connections each slot)")
    for k in duet.blocks:
        kept = [w for w in k["windows"] if w["a_rps"] and w["b_rps"]]
        a = sum(w["a_rps"] for w in kept) / len(kept) if kept else None
        b = sum(w["b_rps"] for w in kept) / len(kept) if kept else None
        print(f"{k['block']:>5}{k['a_slot']:>8}{rps(a):>9}{k['b_slot']:>8}{rps(b):>9}"
              f"{shown(k['window_spread']):>9}{shown(k['ratio']):>8}")
    if duet.blocks_interval:
        print(interval_line(duet.blocks_interval, "blocks", duet.slots) + ": the figure a duet gate judges")


def rps(mean: float | None) -> str:
    """A block's mean goodput, "-" where no window measured both slots."""
    return "-" if mean is None else f"{mean:.1f}"


def interval_line(i: dict, units: str, slots: list[str]) -> str:
    return (f"B/A {i['ratio']:.3f}, in [{i['low']:.3f}, {i['high']:.3f}] at {i['confidence']:.0%} over "
            f"{i['pairs']} {units}; {slots[0]}'s slot ran {i['slot_effect']:.3f}× {slots[1]}'s (taken out)")
