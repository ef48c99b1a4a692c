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
from capbench.engine.console import figure, print_capacities
from capbench.engine.kind import Kind, KindSettings, Needs
from capbench.hosts import topology
from capbench.hosts.backend import ClusterError
from capbench.report.sections import Figure, ReportSection, RunResults, fragment_beside
from capbench.rundata.findings import Findings
from capbench.rundata.records import StepRecord, doc
from capbench.rundata.run import node_numbers
from capbench.rundata.summary import Summary, targets_of
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

# Its part of report.html (capbench/report/sections.py): E and the balancing choices.
REPORT = fragment_beside(__file__)  # cluster.html, a Jinja2 fragment


def report_values(results: RunResults) -> dict:
    found = results.findings(ClusterFindings)
    return {"cluster": found, "choices": found.balancing, "figure_count": len(figure_labels())}


def balance_shares(results: RunResults, record: StepRecord | None, weights: dict | None = None) -> dict | None:
    """Each node's share of the step's requests, its weight's share (the profile's, or `weights` the run set
    through the runtime API) and its share of the nodes' capacities."""
    if record is None or record.host_metrics is None:
        return None
    checks = record.host_metrics.get("requests_cross_check", {})
    nodes = results.nodes
    if weights is None:
        weights = node_numbers(results.run.cluster_settings, "WEIGHT", nodes)
    targets = results.summary.targets
    caps = {n: targets[n].capacity_rps if n in targets else None for n in nodes}

    def share(values: dict) -> dict:
        total = sum(v for v in values.values() if v)
        return {k: (100 * v / total if v and total else None) for k, v in values.items()}

    haproxy = share({n: checks.get(n, {}).get("haproxy_responses") for n in nodes})
    tomcat = share({n: checks.get(n, {}).get("tomcat_requests") for n in nodes})
    weight, capacity = share({n: weights.get(n) for n in nodes}), share(caps)
    return {n: {"haproxy": haproxy[n], "tomcat": tomcat[n], "weight": weight[n], "capacity": capacity[n]}
            for n in nodes}


def report_figures(results: RunResults) -> list[Figure]:
    """The nodes against the cluster, the nodes' shares of the cluster's requests, and the balancing choices."""
    from capbench.report import figures  # matplotlib only when a report is made
    from capbench.report.build import capacity_step
    summary, found, made = results.summary, results.findings(ClusterFindings), []
    weighted = found.balancing.get("weighted")  # WEIGHTS=auto's: the cluster under capacity weights
    # The cluster's capacity: its one search, or under WEIGHTS=auto the search under capacity weights.
    label = "cluster" if "cluster" in summary.targets else weighted.label if weighted else None
    if label in summary.targets:
        made.append(("single vs cluster", figures.single_vs_cluster(summary, found, results.cpus,
                                                                    results.paths.figure("single-vs-cluster"), results.nodes)))
        shares = balance_shares(results, capacity_step("cluster", summary.targets[label], results.steps),
                                weighted.weights if weighted else None)
        if shares:
            made.append(("load balance", figures.load_balance(shares, results.paths.figure("load-balance"))))
    if len(found.balancing) > 1:
        made.append(("balancing choices", figures.balancing(found.balancing, found.sum_nodes_rps,
                                                            results.paths.figure("balancing"))))
    return made


def node_count_points(summary: Summary) -> tuple[str, list[dict], None]:
    """The USL's points over nodes in rotation, for the report to fit: node1 alone and the cluster."""
    node1 = summary.targets.get("node1")
    points = [{"n": 1, "throughput_rps": node1.capacity_rps if node1 else None},
              {"n": len(topology.NODES), "throughput_rps": summary.findings(ClusterFindings).cluster_rps}]
    return "nodes in rotation", [p for p in points if p["throughput_rps"]], None


class Cluster(Kind):
    name = "cluster"
    description = "capacity of each node alone, then of all three: ΣX_i, X_cluster, E (WEIGHTS=auto: 3 balancings)"
    section = ReportSection((REPORT,), report_values, report_figures, usl=node_count_points)
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

    def history(self, found: ClusterFindings) -> dict:
        return {"cluster_rps": found.cluster_rps, "efficiency": found.efficiency,
                "cluster_over_node1": found.cluster_over_node1}

    def console(self, summary: dict, found: ClusterFindings) -> None:
        print_capacities(summary)
        why = found.not_measured

        def shown(key: str, unit: str = "") -> str:
            value = getattr(found, key)
            return figure(value, unit) if value is not None else why.get(key, "not measured")
        if len(why) == len(figure_labels()) and len(set(why.values())) == 1:  # one loss took them all: said once
            print(f"ΣX_i, X_cluster, E, X_cluster / X_node1: {next(iter(why.values()))}")
        else:
            print(f"{'ΣX_i':<10}{shown('sum_nodes_rps', '/s'):>12}")
            print(f"{'X_cluster':<10}{shown('cluster_rps', '/s'):>12}")
            if "efficiency" in why and why["efficiency"] == why.get("cluster_over_node1"):  # one reason, said once
                print(f"E = X_cluster / ΣX_i and X_cluster / X_node1: {why['efficiency']}")
            else:
                print(f"E = X_cluster / ΣX_i = {shown('efficiency')}    X_cluster / X_node1 = "
                      f"{shown('cluster_over_node1')}")
        if efficiency.caveat(found.efficiency):
            print(f"note: {efficiency.caveat(found.efficiency)}")
        if found.balance_hint:
            print(f"balance: {found.balance_hint.text}")
        for line in found.over_capacity:
            print(f"balance: {line}")
        for choice, b in found.balancing.items():
            weights = ":".join(str(w) for w in b.weights.values())
            capacity = figure(b.capacity_rps, "/s") if b.capacity_rps else "none"
            print(f"  balancing {choice:<10} balance {b.balance:<10} weights {weights:<10} "
                  f"X_cluster {capacity:>9}  E {figure(b.efficiency)}")
            if b.efficiency_caveat or efficiency.caveat(b.efficiency):
                print(f"    note: {b.efficiency_caveat or efficiency.caveat(b.efficiency)}")

KIND = Cluster()
