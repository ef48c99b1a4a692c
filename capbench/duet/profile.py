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
from capbench.report.sections import fragment_beside
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
REPORT = fragment_beside(__file__)  # profile.html, a Jinja2 fragment
