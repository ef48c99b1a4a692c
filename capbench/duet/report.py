"""A duet's part of report.html (capbench/report/sections.py) and of the console: the pairs' capacities and their
interval, the blocks' throughputs and theirs (the figure a duet gate judges), the common rate's figures."""
from __future__ import annotations

from capbench.analysis import duet_common
from capbench.duet.findings import DuetFindings

REPORT = """{% if duet.builds %}
<h2>Duet: B against A, measured together</h2>
<p>A = {{ duet.builds[0].text or "as configured" }}, B = {{ duet.builds[1].text or "as configured" }};
the slots {{ duet.slots | join(" and ") }} are twins, the builds change slots each pair.</p>
<table><tr><th>pair</th><th>A on</th><th>A /s</th><th>B on</th><th>B /s</th><th>brackets' B/A</th>
<th>same instants allow</th><th>B/A</th></tr>
{% for p in duet.pairs %}{% set k = p.same_instant %}<tr><td>{{ p.pair }}</td><td>{{ p.a_slot }}</td>
<td>{{ p.a_rps }}</td><td>{{ p.b_slot }}</td><td>{{ p.b_rps }}</td><td>{{ p.bracket_ratio }}</td>
<td>{% if k %}({{ k.low if k.low is not none else "0" }}, {{ k.high if k.high is not none else "∞" }}):
{{ k.bounds }} steps, {{ k.contradicted }} contradicted{% else %}no bound{% endif %}</td>
<td><b>{{ p.ratio }}</b></td></tr>{% endfor %}</table>
<p>A pair's B/A is its brackets' ratio moved inside what the steps where one slot passed and the other failed, at
the same instants, allow.</p>
{% if duet.interval %}<p{% if not duet.blocks %} class="big"{% endif %}>The capacities' B/A <b>{{ duet.interval.ratio }}</b>, in
[{{ duet.interval.low }}, {{ duet.interval.high }}] at
{{ (100 * duet.interval.confidence) | round | int }} % over {{ duet.interval.pairs }} pairs
({{ duet.slots[0] }}'s slot ran {{ duet.interval.slot_effect }}× {{ duet.slots[1] }}'s,
taken out)</p>{% endif %}
{% set bl = duet.blocks %}{% if bl %}{% set plan = duet.block_plan %}
<h3>Throughput at the same concurrency, in blocks</h3>
<p>Each window both slots ran a closed loop of {{ plan.connections }} connections for {{ plan.window_s }} s from
one start instant; each block is {{ plan.windows }} windows with A on one slot and B on the other, the blocks'
orientations balanced in couples and drawn at random (seed {{ plan.seed }}). A window's figure is each build's
good responses a second; a block's B/A is the geometric mean of its windows'.</p>
<table><tr><th>block</th><th>A on</th><th>B on</th><th>A /s (windows)</th><th>B /s (windows)</th>
<th>windows' spread</th><th>B/A</th></tr>
{% for k in bl %}<tr><td>{{ k.block }}</td><td>{{ k.a_slot }}</td><td>{{ k.b_slot }}</td>
<td>{% for w in k.windows %}{{ w.a_rps | round(1) if w.a_rps is not none else "-" }} {% endfor %}</td>
<td>{% for w in k.windows %}{{ w.b_rps | round(1) if w.b_rps is not none else "-" }} {% endfor %}</td>
<td>{{ k.window_spread if k.window_spread is not none else "-" }}</td><td><b>{{ k.ratio if k.ratio is not none else "-" }}</b></td></tr>
{% endfor %}</table>
{% set i = duet.blocks_interval %}{% if i %}<p class="big">B/A <b>{{ i.ratio }}</b>, in [{{ i.low }}, {{ i.high }}]
at {{ (100 * i.confidence) | round | int }} % over {{ i.pairs }} blocks ({{ duet.slots[0] }}'s slot ran
{{ i.slot_effect }}× {{ duet.slots[1] }}'s, taken out): the figure a duet gate judges.</p>{% endif %}
{% endif %}
{% set c = duet.common %}{% if c %}
<h3>At a common rate</h3>
<p>After each pair's searches, both slots offered {{ c.share_pct }} % of the lower capacity, from one start
instant: what each build spends on the same work. CPU per request is the node JVM's, from PCP (MONITOR=on).</p>
<table><tr><th>pair</th><th>rate /s</th><th>A p99 ms</th><th>B p99 ms</th><th>p99 B/A</th><th>A CPU ms/req</th>
<th>B CPU ms/req</th><th>CPU B/A</th></tr>
{% for p in c.pairs %}<tr><td>{{ p.pair }}</td><td>{{ p.rate_rps }}</td>
{% for k in ("a_p99", "b_p99", "p99_ratio", "a_cpu", "b_cpu", "cpu_ratio") %}<td>{{ p[k] if p[k] is not none else "-" }}</td>
{% endfor %}</tr>{% endfor %}</table>
{% for key, i in c.intervals.items() %}<p>{{ "CPU per request" if key == "cpu" else "p99" }} B/A:
{% if i %}<b>{{ i.ratio }}</b>, in [{{ i.low }}, {{ i.high }}] at {{ (100 * i.confidence) | round | int }} % over
{{ i.pairs }} pairs{% else %}too few pairs measured it{% endif %}</p>{% endfor %}
{% endif %}
{% endif %}
"""


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
