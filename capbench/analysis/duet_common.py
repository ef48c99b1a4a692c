"""A duet's builds compared at one common rate. After a pair's two searches, one more step set offers both slots
the same rate, below both capacities (DUET_COMMON_PCT of the lower), from one start instant: there the builds do
the same work on the same machine, and differ only in what they spend on it. Each build's p99 and, where PCP
logged the step (MONITOR=on), its JVM's CPU time per request (capbench/metrics/catalogue.py): a figure with no step
quantisation, where a capacity is known only to the search's precision. B/A of each, pair by pair, and their
intervals by the same crossover as the capacities' (capbench/analysis/duet_verdict.py): the slots were swapped too."""
from __future__ import annotations

from capbench.analysis.duet_verdict import crossover, interval_dict
from capbench.rundata.records import StepRecord

COMMON = "common"  # the phase of a pair's step set at the common rate
FIGURES = {"cpu": "CPU ms per request", "p99": "p99 ms"}


def common_rate(pct: float, a_rps: float | None, b_rps: float | None) -> float | None:
    """pct % of the lower of the two builds' capacities, where both are compared (the common step, the duet's
    profile); None when a build had none."""
    if not a_rps or not b_rps:
        return None
    return round(min(a_rps, b_rps) * pct / 100, 1)


def figures(record: StepRecord) -> dict[str, float | None]:
    """What one slot's common step measured: its JVM's CPU ms per request (None without PCP) and its p99."""
    cpu = ((record.host_metrics or {}).get(record.target) or {}).get("cpu_ms_per_request")
    return {"cpu": cpu, "p99": record.result.latency_ms.get("p99")}


def common_pairs(records: list[StepRecord]) -> list[dict]:
    """Per pair with a valid common step on both slots: the rate, each build's slot and figures, and B/A."""
    steps: dict[int, dict[str, StepRecord]] = {}
    for record in records:
        if record.phase == COMMON and record.valid:
            steps.setdefault(record.repeat, {})[record.label] = record
    pairs = []
    for number, by_build in sorted(steps.items()):
        if set(by_build) != {"A", "B"}:
            continue
        a, b = figures(by_build["A"]), figures(by_build["B"])
        pairs.append({"pair": number, "rate_rps": by_build["A"].result.offered_rps,
                      "a_slot": by_build["A"].target, "b_slot": by_build["B"].target,
                      "passed": by_build["A"].passed and by_build["B"].passed,
                      "a_passed": by_build["A"].passed, "b_passed": by_build["B"].passed,
                      **{f"{side}_{key}": value for side, own in (("a", a), ("b", b)) for key, value in own.items()},
                      **{f"{key}_ratio": round(b[key] / a[key], 4) if a[key] and b[key] is not None else None
                         for key in FIGURES}})
    return pairs


def intervals(pairs: list[dict]) -> dict[str, dict | None]:
    """Each figure's B/A with its interval over the pairs that have it (None where too few pairs do)."""
    found = {}
    for key in FIGURES:
        ratios = [(p["a_slot"], p[f"{key}_ratio"], (1.0, 1.0)) for p in pairs if p[f"{key}_ratio"]]
        try:
            found[key] = interval_dict(crossover(ratios))
        except ValueError:  # too few pairs with this figure, or A on one slot only
            found[key] = None
    return found


# Pairs whose common steps must all show B failing the SLO where A met it: one step near a coarse search's knee
# can fail on B's side alone in an A/A duet (docs/findings.md, why the duet is built as it is).
SLO_PAIRS = 2


def slo_broken(common: dict | None) -> str | None:
    """Why B breaks the SLO where A keeps it, at a common rate below both capacities: in every pair that measured
    it, at least SLO_PAIRS, B's step failed while A's passed (a build that keeps its throughput but not its
    latency); None otherwise."""
    pairs = (common or {}).get("pairs") or []
    broken = [p for p in pairs if p.get("a_passed") and p.get("b_passed") is False]
    if len(pairs) < SLO_PAIRS or len(broken) < len(pairs):
        return None
    shown = ", ".join(f"{p['b_p99']:g} ms against A's {p['a_p99']:g} at {p['rate_rps']:g}/s" for p in broken
                      if p["a_p99"] is not None and p["b_p99"] is not None)
    return (f"B failed the SLO at a common rate where A met it in {len(broken)} of {len(pairs)} pairs"
            + (f" (p99 {shown})" if shown else ""))


def summary(records: list[StepRecord], share_pct: int) -> dict | None:
    """The duet's common-rate comparison for summary.json (None when no pair measured one)."""
    pairs = common_pairs(records)
    return {"share_pct": share_pct, "pairs": pairs, "intervals": intervals(pairs)} if pairs else None


def console_lines(common: dict) -> list[str]:
    lines = [f"at a common rate ({common['share_pct']} % of the lower capacity, both slots at once):",
             f"{'pair':>5}{'rate /s':>9}{'A p99 ms':>10}{'B p99 ms':>10}{'A CPU ms/req':>14}{'B CPU ms/req':>14}"]
    for p in common["pairs"]:
        shown = [f"{p[k]:.3f}" if p[k] is not None else "-" for k in ("a_p99", "b_p99", "a_cpu", "b_cpu")]
        lines.append(f"{p['pair']:>5}{p['rate_rps']:>9g}{shown[0]:>10}{shown[1]:>10}{shown[2]:>14}{shown[3]:>14}")
    for key, label in FIGURES.items():
        i = common["intervals"][key]
        lines.append(f"{label} B/A {i['ratio']:.3f}, in [{i['low']:.3f}, {i['high']:.3f}] at {i['confidence']:.0%} "
                     f"over {i['pairs']} pairs" if i else
                     f"{label} B/A: too few pairs measured it" + (" (CPU per request needs MONITOR=on)"
                                                                   if key == "cpu" else ""))
    return lines
