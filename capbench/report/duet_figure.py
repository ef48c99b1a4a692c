"""A duet's figures (capbench/kinds/duet.py). With blocks (capbench/analysis/duet_blocks.py), the figure a gate judges: each
window's ratio B/A as a dot and each block's as a mark, coloured by the slot A ran on, the crossover's interval as
a band. Without: each pair's ratio B/A, with how far its brackets and its same-instant
steps let the true ratio lie, marked by the slot A ran on (a hollow mark: the brackets' ratio, where the steps
moved it); the crossover's ratio and interval as a band; 1 and, for a gate, the tolerance's line. Read at a
glance: a band wholly below the line fell, wholly above it holds."""
from __future__ import annotations

from pathlib import Path

from capbench.analysis.duet_verdict import Pair
from capbench.report.figures import colour_of, plt, save


def duet(duet, path: Path, floor: float | None = None) -> Path:
    """`duet`: the duet's findings (capbench/duet/findings.py, DuetFindings)."""
    if duet.blocks:
        return blocks(duet, path, floor)
    pairs = [p for p in duet.pairs if p["ratio"] is not None]
    fig, axis = plt.subplots(figsize=(7.5, 3.6))
    for slot in sorted({p["a_slot"] for p in pairs}):
        own = [p for p in pairs if p["a_slot"] == slot]
        known = [Pair.from_dict(p).known for p in own]
        lows = [p["ratio"] - low for p, (low, _) in zip(own, known)]
        highs = [high - p["ratio"] for p, (_, high) in zip(own, known)]
        axis.errorbar([p["pair"] for p in own], [p["ratio"] for p in own], yerr=[lows, highs], fmt="o", capsize=4,
                      color=colour_of(slot), label=f"A on {slot}")
        # A pair as Pair.as_dict writes it; earlier versions lacked the brackets' ratio.
        moved = [p for p in own if p.get("bracket_ratio") not in (None, p["ratio"])]
        if moved:
            axis.scatter([p["pair"] for p in moved], [p["bracket_ratio"] for p in moved], marker="o",
                         facecolors="none", edgecolors=colour_of(slot), label=f"brackets' ratio (A on {slot})")
    lines(axis, duet.interval, floor)
    axis.set_xlabel("pair (the builds swap slots each pair)")
    axis.set_ylabel("capacity B / A")
    axis.set_xticks([p["pair"] for p in pairs] or [1])
    return finish(fig, axis, duet, path)


def blocks(duet, path: Path, floor: float | None) -> Path:
    fig, axis = plt.subplots(figsize=(7.5, 3.6))
    found = duet.blocks
    for slot in sorted({k["a_slot"] for k in found}):
        own = [k for k in found if k["a_slot"] == slot]
        dots = [(k["block"], w["b_rps"] / w["a_rps"]) for k in own for w in k["windows"] if w["a_rps"] and w["b_rps"]]
        if dots:
            axis.scatter(*zip(*dots), s=10, alpha=0.5, color=colour_of(slot))
        marked = [k for k in own if k["ratio"] is not None]
        axis.scatter([k["block"] for k in marked], [k["ratio"] for k in marked], s=60, marker="D",
                     color=colour_of(slot), label=f"block, A on {slot} (dots: its windows)")
    lines(axis, duet.blocks_interval, floor)
    axis.set_xlabel("block (throughput at the same concurrency, measured together)")
    axis.set_ylabel("goodput B / A")
    axis.set_xticks([k["block"] for k in found] or [1])
    return finish(fig, axis, duet, path)


def lines(axis, interval: dict | None, floor: float | None) -> None:
    """The crossover's ratio and interval as a band, 1, and a gate's tolerance."""
    if interval:
        axis.axhspan(interval["low"], interval["high"], color="tab:purple", alpha=0.15,
                     label=f"B/A {interval['ratio']:.3f}, {interval['confidence']:.0%} interval")
        axis.axhline(interval["ratio"], color="tab:purple", linewidth=1)
    axis.axhline(1.0, color="black", linewidth=0.8, linestyle=":")
    if floor is not None:
        axis.axhline(floor, color="tab:red", linewidth=1, linestyle="--", label=f"tolerance: {floor:.2f}")


def finish(fig, axis, duet, path: Path) -> Path:
    axis.legend(fontsize=8, loc="best")
    a, b = (build.text for build in duet.builds) if duet.builds else ("", "")
    axis.set_title(f"B = {b or 'as configured'} against A = {a or 'as configured'}", fontsize=10)
    return save(fig, path)
