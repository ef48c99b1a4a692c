"""Why E is what it is, from the balance: a weighted round robin sends node i the share w_i / Σw of the traffic,
so the cluster saturates when the first node does, at min_i X_i · Σw / w_i, where X_i is what node i carries
alone. That predicts E under the weights used; weights in proportion to the measured X_i predict E = 1 (up to
what the balancer and the load host carry). When the nodes' shares of their CPU quota at the cluster's capacity
differ by SPREAD_PCT points or more, the hint names the node that set the pace, the weights the measured
capacities give and the E each would predict, pointing at WEIGHTS=auto, which measures them all."""
from __future__ import annotations

# The nodes' shares of their quota at the cluster's capacity differing by at least this many points: the
# balancer's weights do not match what the nodes can carry.
SPREAD_PCT = 15.0
WEIGHT_MAX = 100  # the fastest node's weight in proportion to the capacities (HAProxy allows 1..256)


def capacity_weights(capacities: dict[str, float]) -> dict[str, int]:
    """HAProxy weights in proportion to the nodes' capacities, the fastest at WEIGHT_MAX."""
    top = max(capacities.values())
    return {node: max(1, round(WEIGHT_MAX * cap / top)) for node, cap in capacities.items()}


def predicted_cluster(capacities: dict[str, float], weights: dict[str, float]) -> tuple[float, str]:
    """The rate at which the first node saturates under these weights, and that node."""
    total = sum(weights[node] for node in capacities)
    return min((capacities[node] * total / weights[node], node) for node in capacities if weights[node] > 0)


def hint(capacities: dict[str, float | None], weights: dict[str, float], cluster_rps: float | None,
         shares_pct: dict[str, float | None]) -> dict | None:
    """The balance hint for a cluster measured under `weights`, or None when the shares do not differ enough or
    a figure is missing."""
    known = {node: share for node, share in shares_pct.items() if share is not None}
    if (not cluster_rps or len(known) < 2 or not all(capacities.values())
            or set(weights) < set(capacities) or max(known.values()) - min(known.values()) < SPREAD_PCT):
        return None
    total = sum(capacities.values())
    predicted, first = predicted_cluster(capacities, weights)
    measured_weights = capacity_weights(capacities)
    pace = max(known, key=known.get)
    others = ", ".join(f"{node} {share:g} %" for node, share in known.items() if node != pace)
    used = ":".join(f"{weights[node]:g}" for node in capacities)
    text = (f"{pace} set the pace: at the cluster's capacity it used {known[pace]:g} % of its CPU quota, {others}. "
            f"Under weights {used} the nodes' own capacities predict the cluster saturates when {first} does, at "
            f"{predicted:.1f}/s (E {predicted / total:.3f}; measured {cluster_rps / total:.3f}); weights from "
            f"the measured capacities, {':'.join(str(w) for w in measured_weights.values())}, predict up to "
            f"{total:.1f}/s (E 1.0, if the balancer and the load host keep up): make bench-cluster WEIGHTS=auto "
            "measures both")
    return {"pace_setter": pace, "shares_pct": known, "weights": weights, "predicted_rps": round(predicted, 1),
            "predicted_efficiency": round(predicted / total, 3), "saturates_first": first,
            "capacity_weights": measured_weights, "text": text}
