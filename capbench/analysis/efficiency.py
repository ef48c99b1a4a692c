"""The scale-out efficiency E = X_cluster / ΣX_i and the one-line caveat that goes with it wherever E is shown
(the console's table, summary.json's `efficiency_caveat`, report.html, make compare): the thresholds and the
wording live here only."""
from __future__ import annotations

# Above it the cluster did better than its nodes alone could add up to: not a gain to believe without a look.
SUPERLINEAR_ABOVE = 1.0
# Below it the cluster serves less than half of what its nodes serve alone: more than half the nodes' capacity lost.
WASTEFUL_BELOW = 0.5

SUPERLINEAR = ("E > {above:g} (superlinear): usually the nodes alone were measured colder or noisier than the "
               "cluster, or the balancer's spreading smooths the latency tail; treat with care")
WASTEFUL = ("E < {below:g}: the cluster wastes over half its nodes' capacity; look at the balance (weights) and "
            "at the balancer and load host")


def caveat(e: float | None) -> str | None:
    """What a reader must know about this E, or None when it needs no caveat (or is unknown)."""
    if not isinstance(e, (int, float)):
        return None
    if e > SUPERLINEAR_ABOVE:
        return SUPERLINEAR.format(above=SUPERLINEAR_ABOVE)
    if e < WASTEFUL_BELOW:
        return WASTEFUL.format(below=WASTEFUL_BELOW)
    return None
