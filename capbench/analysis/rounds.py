"""Points measured in rounds (make tune, make bench-variants): every point once a round, in an order drawn at
random for each round, so that a slow minute of the machine falls on each point alike over the rounds. Points are
compared within a round only (one point's capacity over another's measured minutes apart, in the same round),
never across rounds: the machine's speed moves by tens of percent between rounds (docs/findings.md), and within a
round both points saw nearly the same machine.

- A point's standing in a round: its capacity over the round's geometric mean (the round's own speed divides
  out). The best point has the highest median standing.
- best / runner-up: the median of their per-round ratio is the margin; half the range of that ratio over the
  rounds is the band (never below the search's precision).
- The verdict: significant when the best beat the runner-up in every round and by more than the band; within
  the band when the margin is inside it; otherwise cannot tell. With two points and three rounds, "beat it in
  every round" happens by chance one time in eight: the rounds say how often, the reader decides.
- Wins: in how many rounds each point had the highest capacity of its round."""
from __future__ import annotations

import math
import random
from statistics import median

Table = list[dict[str, float | None]]  # one dict a round: label → capacity (None: no capacity that round)


def draw_orders(points: int, rounds: int, seed: str) -> list[list[int]]:
    """Each round's order of the points (1-based indices), drawn at random; the seed (the run's id) makes it the
    same again for the same run (a resumed sweep follows it)."""
    draw = random.Random(seed)
    return [draw.sample(range(1, points + 1), points) for _ in range(rounds)]


def complete_labels(table: Table) -> list[str]:
    """The labels with a capacity in every round, in their first round's order."""
    return [label for label in table[0] if all(r.get(label) for r in table)]


def standings(table: Table) -> dict[str, list[float]]:
    """Each complete label's capacity over its round's geometric mean, round by round."""
    labels = complete_labels(table)
    out: dict[str, list[float]] = {label: [] for label in labels}
    for r in table if labels else []:
        mean = math.exp(sum(math.log(r[label]) for label in labels) / len(labels))
        for label in labels:
            out[label].append(r[label] / mean)
    return out


def ratios(table: Table, a: str, b: str) -> list[float]:
    """a's capacity over b's in each round where both have one."""
    return [r[a] / r[b] for r in table if r.get(a) and r.get(b)]


def round_best(table: Table) -> list[str | None]:
    """Each round's label of the highest capacity (None: no capacity that round)."""
    found = [{label: c for label, c in r.items() if c} for r in table]
    return [max(f, key=f.get) if f else None for f in found]


def wins(table: Table) -> dict[str, int]:
    """In how many rounds each label had its round's highest capacity."""
    best = round_best(table)
    return {label: best.count(label) for label in table[0]}


def compare(table: Table, precision_pct: float, baseline: str | None = None) -> dict:
    """The best point, its margin over the runner-up within the rounds, the band, the verdict, how often each
    point won its round and each point's median change against the baseline in its rounds."""
    rounds = len(table)
    vs_baseline = {label: round(100 * (median(ratios(table, label, baseline)) - 1), 1)
                   for label in table[0] if baseline and ratios(table, label, baseline)}
    result = {"rounds": rounds, "wins": wins(table), "round_best": round_best(table), "vs_baseline_pct": vs_baseline}
    stand = standings(table)
    if not stand:
        return {**result, "best": None, "verdict": "no point found a capacity in every round",
                "band_pct": precision_pct, "within_band": []}
    ranked = sorted(stand, key=lambda label: median(stand[label]), reverse=True)
    best, runner = ranked[0], (ranked[1] if len(ranked) > 1 else None)
    result.update({"best": best, "runner_up": runner})
    if runner is None:
        return {**result, "verdict": "only one point has a capacity in every round", "band_pct": precision_pct,
                "margin_pct": None, "beat_runner_up": None, "within_band": [best]}
    paired = ratios(table, best, runner)
    margin = 100 * (median(paired) - 1)
    band = max(precision_pct, 100 * (max(paired) - min(paired)) / 2)
    beat = sum(1 for ratio in paired if ratio > 1)
    if margin <= band:
        verdict = (f"within the noise band: {best} and {runner} cannot be told apart ({best} ahead in {beat} of "
                   f"{rounds} rounds)")
    elif beat == rounds:
        verdict = (f"significant: {best} beat {runner} in all {rounds} rounds, by {margin:.1f} % (median), beyond "
                   f"the band ±{band:.1f} %")
    else:
        verdict = (f"cannot tell: {best} is {margin:.1f} % over {runner} (median) but ahead in {beat} of "
                   f"{rounds} rounds only")
    within = [label for label in ranked if median(ratios(table, label, best)) >= 1 - band / 100]
    return {**result, "verdict": verdict, "margin_pct": round(margin, 1), "band_pct": round(band, 1),
            "beat_runner_up": beat, "within_band": within}
