"""How bench-cluster shows what it found (capbench/kinds/cluster.py measures it; cluster_findings.py holds it): the
console's lines after the capacities, its part of report.html (cluster_shown.html) and its figures, and its
history line's figures."""
from __future__ import annotations

from capbench.analysis import efficiency
from capbench.engine.console import figure, print_capacities
from capbench.engine.kind import Showing
from capbench.hosts import topology
from capbench.kinds.cluster_findings import ClusterFindings, figure_labels
from capbench.report.sections import Figure, ReportSection, RunResults, fragment_beside
from capbench.rundata.records import StepRecord
from capbench.rundata.run import node_numbers
from capbench.rundata.summary import Summary

# Its part of report.html (capbench/report/sections.py): E and the balancing choices.
REPORT = fragment_beside(__file__)  # cluster_shown.html, a Jinja2 fragment


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


class ClusterShown(Showing):
    """How bench-cluster shows what it found (capbench/engine/kind.py's Showing)."""
    section = ReportSection((REPORT,), report_values, report_figures, usl=node_count_points)

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
