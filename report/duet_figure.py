"""A duet's figure (load/kinds/duet.py): each pair's ratio B/A, with how far its brackets let the true ratio lie,
marked by the slot A ran on; the crossover's ratio and interval as a band; 1 and, for a gate, the tolerance's
line. Read at a glance: a band wholly below the line fell, wholly above it holds."""
from __future__ import annotations

from pathlib import Path

from report.figures import colour_of, plt, save


def duet(duet: dict, path: Path, floor: float | None = None) -> Path:
    pairs = [p for p in duet.get("pairs", []) if p.get("ratio") is not None]
    fig, axis = plt.subplots(figsize=(7.5, 3.6))
    for slot in sorted({p["a_slot"] for p in pairs}):
        own = [p for p in pairs if p["a_slot"] == slot]
        lows = [p["ratio"] - p["b_rps"] / p["a_lowest_failure_rps"] for p in own]
        highs = [p["b_lowest_failure_rps"] / p["a_rps"] - p["ratio"] for p in own]
        axis.errorbar([p["pair"] for p in own], [p["ratio"] for p in own], yerr=[lows, highs], fmt="o", capsize=4,
                      color=colour_of(slot), label=f"A on {slot}")
    interval = duet.get("interval")
    if interval:
        axis.axhspan(interval["low"], interval["high"], color="tab:purple", alpha=0.15,
                     label=f"B/A {interval['ratio']:.3f}, {interval['confidence']:.0%} interval")
        axis.axhline(interval["ratio"], color="tab:purple", linewidth=1)
    axis.axhline(1.0, color="black", linewidth=0.8, linestyle=":")
    if floor is not None:
        axis.axhline(floor, color="tab:red", linewidth=1, linestyle="--", label=f"tolerance: {floor:.2f}")
    axis.set_xlabel("pair (the builds swap slots each pair)")
    axis.set_ylabel("capacity B / A")
    axis.set_xticks([p["pair"] for p in pairs] or [1])
    axis.legend(fontsize=8, loc="best")
    a, b = duet.get("builds", [{}, {}])
    axis.set_title(f"B = {b.get('text') or 'as configured'} against A = {a.get('text') or 'as configured'}",
                   fontsize=10)
    return save(fig, path)
