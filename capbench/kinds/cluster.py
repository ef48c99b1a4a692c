"""make bench-cluster: each node alone, then all of them: each capacity, their sum ΣX_i, the cluster's capacity
X_cluster, the scale-out efficiency E = X_cluster / ΣX_i and X_cluster / X_node1.

WEIGHTS=profile measures the cluster under the profile's balancer; equal under weights 1:1:1; auto three
times: equal weights, weights in proportion to the node capacities just measured, and leastconn (equal
weights), each with its E."""
from __future__ import annotations

from dataclasses import dataclass

from capbench.analysis import balance, efficiency, not_measured
from capbench.analysis.balance import capacity_weights
from capbench.analysis.testbed_ceiling import Ceiling, efficiency_not_measured
from capbench.engine.kind import Kind, KindSettings, Needs
from capbench.hosts import topology
from capbench.hosts.backend import ClusterError
from capbench.kinds.cluster_findings import BalanceHint, BalancingChoice, ClusterFindings, figure_labels
from capbench.kinds.cluster_shown import ClusterShown
from capbench.rundata.run import node_numbers
from capbench.rundata.summary import targets_of
from capbench.settings.fields import choice as one_of, setting

# WEIGHTS=auto: the balancing choices the cluster is measured under (label, HAProxy balance, weights)
BALANCING = (("equal", "roundrobin", "equal"), ("weighted", "roundrobin", "capacity"), ("leastconn", "leastconn", "equal"))

WEIGHTS = ("profile", "equal", "auto")


@dataclass(frozen=True)
class ClusterSettings(KindSettings):
    weights: str = setting("WEIGHTS", "profile", one_of(WEIGHTS),
                           "the balancer's weights for the cluster's search: profile (the profile's NODEn_WEIGHT), "
                           "equal (1:1:...), or auto (weights from the capacities just measured; the cluster "
                           "measured under equal weights, those weights and leastconn, with E for each)")


class Cluster(Kind):
    name = "cluster"
    description = "capacity of each node alone, then of all three: ΣX_i, X_cluster, E (WEIGHTS=auto: 3 balancings)"
    shows = ClusterShown()
    needs = Needs(gated=True)
    own_settings = ClusterSettings
    findings = ClusterFindings

    @property
    def targets(self) -> tuple[str, ...]:
        return (*topology.NODES, "cluster")

    def planned_searches(self, settings) -> int:
        if self.own(settings).weights == "auto":
            return (len(topology.NODES) + len(BALANCING)) * settings.repeats
        return len(self.targets) * settings.repeats

    def run(self, bench, found: ClusterFindings) -> None:
        for node in topology.NODES:
            bench.search(node)
        if self.own(bench.settings).weights == "profile":
            bench.search("cluster")
            return
        equal = {node: 1 for node in topology.NODES}
        if self.own(bench.settings).weights == "equal":
            try:
                bench.balancer.set("equal", "roundrobin", equal)
                bench.search("cluster")
            finally:
                bench.balancer.restore()
            return
        capacities = {node: bench.capacity(node) for node in topology.NODES}
        missing = [node for node, cap in capacities.items() if not cap]
        if missing:
            raise ClusterError(f"WEIGHTS=auto needs each node's capacity; none was found for {', '.join(missing)}")
        proportional = capacity_weights(capacities)
        try:
            for choice, algorithm, weights in BALANCING:
                bench.balancer.set(choice, algorithm, proportional if weights == "capacity" else equal)
                bench.search("cluster", label=f"cluster {choice}")
        finally:
            bench.balancer.restore()

    def summarize(self, bench, summary: dict, found: ClusterFindings) -> None:
        capacities = {label: t["capacity_rps"] for label, t in summary["targets"].items()}
        node_caps = [capacities.get(n) for n in topology.NODES]
        found.sum_nodes_rps = round(sum(node_caps), 1) if all(node_caps) else None
        node1, cluster = node_caps[0], capacities.get("cluster")

        def gains(x: float | None) -> dict:
            e = round(x / found.sum_nodes_rps, 3) if x and found.sum_nodes_rps else None
            return {"efficiency": e, "efficiency_caveat": efficiency.caveat(e),
                    "cluster_over_node1": round(x / node1, 3) if x and node1 else None}
        for choice, b in bench.balancer.choices.items():  # WEIGHTS=equal or auto: the cluster under each choice
            if choice != "restored":
                label = f"cluster {choice}" if f"cluster {choice}" in capacities else "cluster"
                found.balancing[choice] = BalancingChoice(b["balance"], b["weights"], label, capacities.get(label),
                                                          **gains(capacities.get(label)))
        if cluster is None and "weighted" in found.balancing:  # WEIGHTS=auto: the one under capacity weights
            cluster = found.balancing["weighted"].capacity_rps
        found.update({"cluster_rps": cluster, **gains(cluster)})
        found.not_measured = {key: not_measured.why_missing(summary, labels) for key, labels in figure_labels().items()
                              if getattr(found, key) is None}
        self._testbed_bound(summary, found)
        found.balance_hint = self._balance_hint(bench, summary, found)
        found.over_capacity = self._over_capacity(summary)

    @staticmethod
    def _testbed_bound(summary: dict, found: ClusterFindings) -> None:
        """E and X_cluster / X_node1 are not the application's where a capacity they are made of is the testbed's
        ceiling (capbench/analysis/testbed_ceiling.py): withheld, with the reason in their place and E as the figures give
        it kept apart; likewise each balancing choice's."""
        targets = summary["targets"]
        c = summary.get("testbed_ceiling") or {}
        ceiling = Ceiling(c.get("machine_cpus"), c.get("node_quotas") or {}, c.get("harness_ms_per_request"), "",
                          machine=c.get("machine") or "this machine")

        def bound(labels) -> dict:
            return {label: targets[label]["testbed_bound"] for label in labels
                    if (targets.get(label) or {}).get("testbed_bound")}
        nodes_bound = bound(topology.NODES)
        weighted = found.balancing.get("weighted")  # WEIGHTS=auto: X_cluster is the search under capacity weights
        label = weighted.label if weighted and "cluster" not in targets else "cluster"
        for key in ("efficiency", "cluster_over_node1"):
            marks = bound([label if name == "cluster" else name for name in figure_labels()[key]])
            if marks and getattr(found, key) is not None:
                if key == "efficiency":
                    found.testbed_efficiency = found.efficiency
                setattr(found, key, None)
                found.not_measured[key] = efficiency_not_measured(found.sum_nodes_rps, found.cluster_rps, ceiling,
                                                                  marks)
                found.efficiency_caveat = None
        for choice in found.balancing.values():
            marks = {**nodes_bound, **bound([choice.label])}
            if marks and choice.efficiency is not None:
                choice.efficiency, choice.cluster_over_node1 = None, None
                choice.efficiency_caveat = efficiency_not_measured(found.sum_nodes_rps, choice.capacity_rps, ceiling,
                                                                   marks)

    @staticmethod
    def _over_capacity(summary: dict) -> list[str]:
        """The nodes HAProxy sent more, at the cluster's capacity, than each carried alone: they paced the cluster
        at a rate they carry only for a while, and weights from the capacities would spread it as they can."""
        targets = targets_of(summary)
        caps = {n: targets[n].capacity_rps for n in topology.NODES if n in targets and targets[n].capacity_rps}
        if len(caps) < len(topology.NODES):
            return []
        weights = ":".join(str(w) for w in capacity_weights(caps).values())
        found = []
        for label, t in targets.items():
            servers = ((t.metrics_at_capacity or {}).get("lb") or {}).get("servers") or {}
            if not label.startswith("cluster"):
                continue
            for node, cap in caps.items():
                sent = (servers.get(node) or {}).get("responses_per_s")
                if sent and sent > cap:
                    found.append(f"at {label}'s {t.capacity_rps:g}/s {node} received {sent:.1f}/s, above its "
                                 f"{cap:g}/s alone: it paced the cluster; weights from the capacities "
                                 f"(WEIGHTS=auto) would give {weights}")
        return found

    @staticmethod
    def _balance_hint(bench, summary: dict, found: ClusterFindings) -> BalanceHint | None:
        """Which node set the cluster's pace and what weights would do (capbench/analysis/balance.py), for the cluster
        measured under the profile's or equal weights."""
        targets = targets_of(summary)
        label = "cluster" if "cluster" in targets else "cluster equal" if "cluster equal" in targets else None
        if label is None:
            return None
        if Cluster.own(bench.settings).weights == "profile":
            weights = node_numbers(bench.cluster_settings(), "WEIGHT", topology.NODES)
        else:  # WEIGHTS=equal, or auto's first choice
            weights = found.balancing["equal"].weights if "equal" in found.balancing else {}
        at = targets[label].metrics_at_capacity or {}  # PCP's figures by host (None: not monitored)
        hint = balance.hint({n: targets[n].capacity_rps if n in targets else None for n in topology.NODES}, weights,
                            targets[label].capacity_rps,
                            {n: at[n].get("cpu_pct_of_quota") if at.get(n) else None for n in topology.NODES})
        return BalanceHint(**hint) if hint else None


KIND = Cluster()
