"""What bench-cluster finds (capbench/kinds/cluster.py measures it): ΣX_i, X_cluster, E and X_cluster / X_node1, each
balancing choice's capacity, the balance hint, and the search labels each figure is made of."""
from __future__ import annotations

from dataclasses import dataclass

from capbench.hosts import topology
from capbench.rundata.findings import Findings
from capbench.rundata.records import doc


@dataclass
class BalanceHint:
    """Which node set the cluster's pace under the weights it was measured with, and what weights from the
    nodes' capacities would predict (capbench/analysis/balance.py)."""
    pace_setter: str = doc("the node with the highest share of its CPU quota at the cluster's capacity")
    shares_pct: dict[str, float] = doc("each node's CPU % of its quota there")
    weights: dict[str, float] = doc("the weights the cluster was measured under")
    predicted_rps: float = doc("the cluster's capacity the nodes' capacities predict under those weights")
    predicted_efficiency: float = doc("E that prediction gives")
    saturates_first: str = doc("the node the prediction saturates first")
    capacity_weights: dict[str, int] = doc("weights in proportion to the measured capacities")
    text: str = doc("all of it in a sentence")


@dataclass
class BalancingChoice:
    """The cluster measured under one balancing choice (WEIGHTS=equal or auto)."""
    balance: str = doc("HAProxy's balance algorithm")
    weights: dict[str, int] = doc("the nodes' weights")
    label: str = doc("the search label of the cluster under it")
    capacity_rps: float | None = doc("its capacity", default=None)
    efficiency: float | None = doc("E = its capacity / ΣX_i", default=None)
    efficiency_caveat: str | None = doc("E's one-line caveat above 1 or below 0.5", default=None)
    cluster_over_node1: float | None = doc("its capacity / X_node1", default=None)


@dataclass
class ClusterFindings(Findings):
    """bench-cluster: the nodes against the cluster."""
    kind = "cluster"
    sum_nodes_rps: float | None = doc("ΣX_i, the sum of the nodes' capacities", default=None)
    cluster_rps: float | None = doc("X_cluster (under WEIGHTS=auto: under capacity weights)", default=None)
    efficiency: float | None = doc("E = X_cluster / ΣX_i", default=None)
    efficiency_caveat: str | None = doc("E's one-line caveat above 1 or below 0.5", default=None)
    cluster_over_node1: float | None = doc("X_cluster / X_node1", default=None)
    not_measured: dict[str, str] = doc("for each of the four figures above that is missing, why "
                                       "(capbench/analysis/not_measured.py)", default_factory=dict)
    balancing: dict[str, BalancingChoice] = doc("WEIGHTS=equal or auto: each balancing choice's capacity and E",
                                                default_factory=dict)
    balance_hint: BalanceHint | None = doc("what the nodes' shares say about the weights", default=None)
    over_capacity: list[str] = doc("each node HAProxy sent more at the cluster's capacity than it carried alone, in "
                                   "a sentence: it paced the cluster", default_factory=list)
    testbed_efficiency: float | None = doc("where a figure E is made of is testbed-bound: E as the figures would give "
                                           "it, the testbed's and not the application's (`efficiency` is then None "
                                           "and `not_measured` says why)", default=None)

    @classmethod
    def earlier(cls, summary: dict) -> dict | None:
        """Before it had a section of its own its figures were at summary.json's top level."""
        return summary if "cluster" not in summary and "sum_nodes_rps" in summary else None


# The search labels each of the run's figures is made of: a figure missing says why by the first of them without a
# capacity (capbench/analysis/not_measured.py).
def figure_labels() -> dict[str, list[str]]:
    nodes = topology.NODES
    return {"sum_nodes_rps": list(nodes), "cluster_rps": ["cluster"], "efficiency": [*nodes, "cluster"],
            "cluster_over_node1": [nodes[0], "cluster"]}
