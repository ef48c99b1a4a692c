"""A duet's profile (JFR=on): after its last pair, both slots recorded by JDK Flight Recorder and sampled by
async-profiler over the same
steps, at one rate for both builds (DUET_COMMON_PCT of the pair's lower capacity; that capacity itself when 0),
beside unprofiled steps (capbench/engine/profile_step.py's pairs, each measured on both slots at once). Each build's tables
and flame graphs go to the report's profiles; what B spends more on than A, per request, to the duet's section
(capbench/analysis/profile_difference.py). Measured at the same instants, the two profiles share the machine's minutes:
their difference is the builds'."""
from __future__ import annotations

from typing import Callable

from capbench.analysis import profile_difference
from capbench.engine import profile_step
from capbench.engine.progress import say
from capbench.search.lockstep import Ask

# Rows of each table read from the recordings: a method that grew in B may sit far down A's table, and a method
# missing from a cut table is known only as "at most its last row".
TOP = 200


def profile_both(bench, assignment: dict, rate_rps: float,
                 together: Callable[[list[Ask], int], dict]) -> dict | None:
    """Both slots profiled at rate_rps; `together(asks, seconds)` measures one step on each slot at once (the
    duet's); returns the difference (None where a slot's recording or requests are missing)."""
    seconds = bench.settings.jfr.seconds

    def measure(phase: str) -> dict:
        records = together([Ask(node, rate_rps, phase) for node in assignment], seconds)
        return {assignment[node].name: record for node, record in records.items()}

    profile_step.profile(bench, rate_rps, {b.name: (node,) for node, b in assignment.items()}, measure, top=TOP)
    slot = {b.name: node for node, b in assignment.items()}
    found = bench.profiles
    tables = {name: (found[name]["nodes"].get(slot[name]) or {}).get("tables") for name in ("A", "B")}
    served = {name: found[name]["profiled"]["answered_ok"] for name in ("A", "B")}
    if not all(tables.values()) or not all(served.values()):
        say("the duet's profile difference: a slot's recording or its requests are missing (above)")
        return None
    sampler = {name: (found[name]["nodes"][slot[name]].get("cpu_profiler") or {}) for name in ("A", "B")}
    difference = {"rate_rps": rate_rps, "a_slot": slot["A"], "b_slot": slot["B"], "per": profile_difference.PER,
                  "sampled_by": profile_difference.sampled_by(sampler["A"], sampler["B"]),
                  "unit": profile_difference.unit(tables["A"], tables["B"]),
                  "a_requests": served["A"], "b_requests": served["B"],
                  "a_samples": profile_difference.totals(tables["A"], served["A"]),
                  "b_samples": profile_difference.totals(tables["B"], served["B"]),
                  "a_samples_per_s": profile_difference.samples_per_s(tables["A"]),
                  "b_samples_per_s": profile_difference.samples_per_s(tables["B"]),
                  "max_samples_per_s": profile_difference.MAX_SAMPLES_PER_S,
                  "min_samples": profile_difference.MIN_SAMPLES,
                  "grew": profile_difference.grew(tables["A"], tables["B"], served["A"], served["B"], TOP)}
    top = difference["grew"]["self"][:1]
    say(f"duet profile at {rate_rps:g}/s: {difference['unit']} per {profile_difference.PER} requests A "
        f"{difference['a_samples']}, B {difference['b_samples']}"
        + (f"; grew most (self): {top[0]['name']} {top[0]['a']} → {top[0]['b']}" if top else ""))
    return difference


# Its part of the duet's section in report.html.
REPORT = """{% set d = duet.profile_difference %}{% if d %}
<h3>What B spends more on than A ({{ d.unit or "CPU samples" }}, both at {{ d.rate_rps }}/s)</h3>
<p>After the last pair, both slots (A on {{ d.a_slot }}, B on {{ d.b_slot }}) offered the same rate over the same
seconds, profiled (each build's tables and flame graphs are under "Profiles" below). {{ d.unit or "CPU samples" }}
per {{ d.per }} requests answered without an error status: A {{ d.a_samples }}, B {{ d.b_samples }}
({{ d.a_requests }} and {{ d.b_requests }} requests).
{% set by = d.sampled_by or {} %}{% if by.interval_us %}async-profiler sampled both JVMs at least {{ by.interval_us }} µs of
CPU time apart ({{ by.event }}), in Java code or native, and each sample is weighed by the CPU time it stood for
(one the quota delayed stands for more): a method that takes B longer for the same requests has more of B's CPU
time ({{ d.a_samples_per_s }} samples a second on A, {{ d.b_samples_per_s }} on B).
{% else %}{% if by.why %}{{ by.why }}; {% endif %}a thread running Java code is sampled every
10 ms by JFR's sampler inside the JVM's own CPU quota, so the samples follow the CPU time each JVM got: a method that
takes B longer for the same requests has more of B's samples. The sampler takes at most {{ d.max_samples_per_s }}
samples a second (5 threads a tick); these took {{ d.a_samples_per_s }} (A) and {{ d.b_samples_per_s }} (B).
{% endif %}"≤": the
method was below the last row of A's table (its growth is at least the one shown). Methods with fewer than
{{ d.min_samples }} of B's samples are left out (chance).</p>
<div class="tables">
{% for key, title in (("self", "the method running (self)"), ("total", "anywhere in the stack (total)"),
("application", "the application's methods, anywhere in the stack")) %}
<table><tr><th>grew in B: {{ title }}</th><th>A</th><th>B</th><th>+</th></tr>
{% for r in d.grew[key] %}<tr><td><code>{{ r.name }}</code></td><td class="num">{{ "≤" if r.a_at_most }}{{ r.a }}</td>
<td class="num">{{ r.b }}</td><td class="num">{{ r.grew }}</td></tr>
{% else %}<tr><td colspan="4">none grew</td></tr>{% endfor %}</table>
{% endfor %}</div>
{% endif %}
"""
