"""The scale-out curve: the cluster's capacity X(N) with N = 1…K nodes in rotation, against the ideal, and the
Universal Scalability Law fitted over N (capbench/analysis/usl_fit.py, the same fit as over one node's concurrency).

- ideal(N): for nodes alike (nodes_alike: the same settings, each with a CPU quota) N·X(1); otherwise the
  capacities of the nodes in rotation measured alone, summed (ΣX_i).
- E(N) = X(N) / ideal(N): 1 is perfect scale-out.
- A point whose capacity the harness set (the load host or the balancer out of CPU, see harness_limit) says
  nothing about the nodes: it is kept in the table with its reason and left out of the fit.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass
from statistics import median

from capbench.rundata.run import node_numbers, node_values

# The balancer's or the load host's CPU at a point's capacity from which that host, not the nodes, may have set
# it: HAProxy is one process and oha's workers share the load host, so near a whole core they are the bottleneck.
HARNESS_CPU_PCT = 90.0
# The settings that set a node's capacity alone: cluster/settings.sh's NODE_FIELDS but the weight, which only
# shares the traffic between nodes.
CAPACITY_FIELDS = ("CPUS", "MEM", "HEAP", "GC", "MAXCONN")
# How a point's ideal was had (ScaleoutPoint.ideal_basis)
SUM_ALONE = "ΣX_i"
SCALED_FIRST = "N·X(1)"


@dataclass(frozen=True)
class ScaleoutPoint:
    n: int  # nodes in rotation
    nodes: tuple[str, ...]  # which ones
    capacity_rps: float | None  # X(N), the median of the repeats
    repeats: tuple[float, ...]  # each search's capacity at this N
    ideal_rps: float | None
    efficiency: float | None
    limited_by: str | None = None  # why the harness, not the nodes, set X(N): left out of the fit
    ideal_basis: str | None = None  # SUM_ALONE or SCALED_FIRST

    def as_dict(self) -> dict:
        return {**asdict(self), "nodes": list(self.nodes), "repeats": list(self.repeats)}


def harness_limit(lb_cpu_pct: float | None, load_cpu_pct: float | None) -> str | None:
    """Why the balancer or the load host, rather than the nodes, set a point's capacity, or None."""
    if lb_cpu_pct is not None and lb_cpu_pct >= HARNESS_CPU_PCT:
        return f"the balancer used {lb_cpu_pct:.0f} % of a core at capacity (≥ {HARNESS_CPU_PCT:g} %)"
    if load_cpu_pct is not None and load_cpu_pct >= HARNESS_CPU_PCT:
        return f"the load generator used {load_cpu_pct:.0f} % of its CPUs at capacity (≥ {HARNESS_CPU_PCT:g} %)"
    return None


def nodes_alike(cluster_settings: dict[str, str], nodes: tuple[str, ...]) -> bool:
    """Whether one node's capacity stands for every node's (the ideal N·X(1)): the same CAPACITY_FIELDS, and each
    node a CPU quota. A node without one has its machine's processors, which another machine need not match."""
    values = [tuple(node_values(cluster_settings, field, (node,)).get(node) for field in CAPACITY_FIELDS)
              for node in nodes]
    quotas = node_numbers(cluster_settings, "CPUS", nodes)
    return len(set(values)) == 1 and all(quotas.get(node, 0) > 0 for node in nodes)


def ideal(nodes: tuple[str, ...], alone: dict[str, float], x1: float | None) -> tuple[float | None, str | None]:
    """ΣX_i of the nodes in rotation where each was measured alone, else N·X(1); and which of the two."""
    if nodes and all(alone.get(node) for node in nodes):
        return round(sum(alone[node] for node in nodes), 1), SUM_ALONE
    return (round(len(nodes) * x1, 1), SCALED_FIRST) if x1 else (None, None)


def points(measured: list[dict], alone: dict[str, float] | None = None) -> list[ScaleoutPoint]:
    """measured: one entry per N, {"nodes": [...], "repeats": [capacities], "limited_by": reason or None}, in
    any order; alone: each node's capacity measured alone, if it was."""
    alone = alone or {}
    by_n = sorted(measured, key=lambda m: len(m["nodes"]))
    first = next((m for m in by_n if len(m["nodes"]) == 1), None)
    x1 = median(first["repeats"]) if first and first["repeats"] else None
    out = []
    for m in by_n:
        nodes = tuple(m["nodes"])
        repeats = tuple(r for r in m["repeats"] if r)
        capacity = median(repeats) if repeats else None
        best, basis = ideal(nodes, alone, x1)
        out.append(ScaleoutPoint(n=len(nodes), nodes=nodes, capacity_rps=capacity, repeats=repeats, ideal_rps=best,
                                 efficiency=round(capacity / best, 3) if capacity and best else None,
                                 limited_by=m.get("limited_by"), ideal_basis=basis))
    return out


def ideal_label(curve: list[dict]) -> str:
    """The ideal's basis for a curve's table and figure (points as dicts), e.g. "ΣX_i"."""
    bases = sorted({p.get("ideal_basis") or SCALED_FIRST for p in curve if p.get("ideal_rps")})
    return " or ".join(bases) or SCALED_FIRST


def fit_over_n(curve: list[ScaleoutPoint]) -> dict:
    """The USL over N from every repeat of every point the harness did not limit (each repeat one point, so the
    run-to-run noise enters the standard errors), or why it could not be fitted; the points left out with their
    reasons either way."""
    from capbench.analysis import usl_fit  # numpy and scipy only when fitting

    kept = [p for p in curve if p.limited_by is None]
    left_out = [{"n": p.n, "reason": p.limited_by} for p in curve if p.limited_by is not None]
    n = [float(p.n) for p in kept for _ in p.repeats]
    x = [r for p in kept for r in p.repeats]
    try:
        fitted = usl_fit.fit(n, x).as_dict()
    except usl_fit.UslError as problem:
        fitted = {"error": str(problem), "failed": isinstance(problem, usl_fit.UslFitFailed)}
    return {**fitted, "left_out": left_out}
