"""make bench-cluster: each node alone, then all of them: each capacity, their sum ΣX_i, the cluster's capacity
X_cluster, the scale-out efficiency E = X_cluster / ΣX_i and X_cluster / X_node1.

WEIGHTS=profile measures the cluster under the profile's balancer; equal under weights 1:1:1; auto three
times: equal weights, weights in proportion to the node capacities just measured, and leastconn (equal
weights), each with its E."""
from __future__ import annotations

from dataclasses import dataclass

from analysis import balance, efficiency, not_measured
from analysis.balance import capacity_weights
from engine.console import figure, print_capacities
from engine.kind import Kind, KindSettings
from hosts.backend import ClusterError
from hosts.topology import NODES
from report.sections import Figure, ReportSection, RunResults
from rundata.records import StepRecord
from rundata.run import node_numbers
from rundata.summary import Summary
from settings.fields import choice as one_of, setting

# WEIGHTS=auto: the balancing choices the cluster is measured under (label, HAProxy balance, weights)
BALANCING = (("equal", "roundrobin", "equal"), ("weighted", "roundrobin", "capacity"), ("leastconn", "leastconn", "equal"))

WEIGHTS = ("profile", "equal", "auto")


@dataclass(frozen=True)
class ClusterSettings(KindSettings):
    weights: str = setting("WEIGHTS", "profile", one_of(WEIGHTS),
                           "the balancer's weights for the cluster's search: profile (the profile's NODEn_WEIGHT), "
                           "equal (1:1:...), or auto (weights from the capacities just measured; the cluster "
                           "measured under equal weights, those weights and leastconn, with E for each)")


# The search labels each of the run's figures is made of: a figure missing says why by the first of them without a
# capacity (analysis/not_measured.py).
FIGURE_LABELS = {"sum_nodes_rps": list(NODES), "cluster_rps": ["cluster"], "efficiency": [*NODES, "cluster"],
                 "cluster_over_node1": [NODES[0], "cluster"]}

# Its part of report.html (report/sections.py): E and the balancing choices.
REPORT = """{% set why = summary.section("not_measured") or {} %}
{% macro shown(key, unit="") %}{% if summary[key] is not none %}{{ summary[key] }}{{ unit }}{% else %}<span class="missing">{{ why.get(key, "not measured") }}</span>{% endif %}{% endmacro %}
{% if why | length == figure_count and why.values() | unique | list | length == 1 %}
<p class="big">ΣX<sub>i</sub>, X<sub>cluster</sub>, <b>E</b>, X<sub>cluster</sub> / X<sub>node1</sub>: <span class="missing">{{ why.values() | first }}</span></p>
{% else %}
<p class="big">ΣX<sub>i</sub> = {{ shown("sum_nodes_rps", "/s") }} · X<sub>cluster</sub> = {{ shown("cluster_rps", "/s") }} ·
 <b>E = X<sub>cluster</sub> / ΣX<sub>i</sub> = {{ shown("efficiency") }}</b> · X<sub>cluster</sub> / X<sub>node1</sub> = {{ shown("cluster_over_node1") }}</p>
{% endif %}
{% set e_caveat = summary.efficiency_caveat or caveat(summary.efficiency) %}{% if e_caveat %}<p class="hint caveat">Note on E: {{ e_caveat }}.</p>{% endif %}
{% if summary.balance_hint %}<p class="hint">Balance: {{ summary.balance_hint.text }}.</p>{% endif %}
{% if choices %}
<h2 id="balancing">Balancing choices</h2>
<p>The cluster measured under each balancing choice in this run, against the sum of the nodes' capacities
ΣX<sub>i</sub> = {{ shown("sum_nodes_rps", "/s") }}. Heterogeneous nodes under equal weights get equal shares, so the
slowest node saturates first; weights in proportion to the measured capacities, or leastconn (which sends each
request to the node with the fewest in progress), let each node take what it can.</p>
<table>
<tr><th>choice</th><th>balance</th><th>weights node1:node2:node3</th><th>X<sub>cluster</sub> /s</th><th>E = X<sub>cluster</sub> / ΣX<sub>i</sub></th><th>X<sub>cluster</sub> / X<sub>node1</sub></th></tr>
{% for name, c in choices.items() %}
<tr><td>{{ name }}</td><td>{{ c.balance }}</td><td>{{ c.weights.values() | join(":") }}</td>
<td class="num">{{ c.capacity_rps if c.capacity_rps else "none" }}</td><td class="num">{{ c.efficiency if c.efficiency is not none else "-" }}</td>
<td class="num">{{ c.cluster_over_node1 if c.cluster_over_node1 is not none else "-" }}</td></tr>
{% set e_caveat = c.efficiency_caveat or caveat(c.efficiency) %}{% if e_caveat %}<tr><td></td><td colspan="5" class="hint caveat">Note on E: {{ e_caveat }}.</td></tr>{% endif %}
{% endfor %}
</table>
<p class="figs">Capacities of one run are comparable with each other within the noise band ±{{ noise_pct }} % (search precision, or the repeats' spread).</p>
{% endif %}
"""


def report_values(results: RunResults) -> dict:
    return {"choices": results.summary.balancing or {}, "figure_count": len(FIGURE_LABELS)}


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
    from report import figures  # matplotlib only when a report is made
    from report.build import capacity_step
    summary, made = results.summary, []
    weighted = (summary.balancing or {}).get("weighted", {})
    # The cluster's capacity: its one search, or under WEIGHTS=auto the search under capacity weights.
    label = "cluster" if "cluster" in summary.targets else weighted.get("label")
    if label in summary.targets:
        made.append(("single vs cluster", figures.single_vs_cluster(summary, results.cpus,
                                                                    results.paths.figure("single-vs-cluster"), results.nodes)))
        shares = balance_shares(results, capacity_step("cluster", summary.targets[label], results.steps),
                                weighted.get("weights"))
        if shares:
            made.append(("load balance", figures.load_balance(shares, results.paths.figure("load-balance"))))
    if len(summary.balancing or {}) > 1:
        made.append(("balancing choices", figures.balancing(summary.balancing, summary.sum_nodes_rps,
                                                            results.paths.figure("balancing"))))
    return made


def node_count_points(summary: Summary) -> list[dict]:
    """The USL's points over nodes in rotation where the run fitted none: node1 alone and the cluster."""
    node1 = summary.targets.get("node1")
    points = [{"n": 1, "throughput_rps": node1.capacity_rps if node1 else None},
              {"n": 3, "throughput_rps": summary.cluster_rps}]
    return [p for p in points if p["throughput_rps"]]


class Cluster(Kind):
    name = "cluster"
    description = "capacity of each node alone, then of all three: ΣX_i, X_cluster, E (WEIGHTS=auto: 3 balancings)"
    section = ReportSection(REPORT, report_values, report_figures, node_count_points=node_count_points)
    targets = (*NODES, "cluster")
    gated = True
    own_settings = ClusterSettings

    def planned_searches(self, settings) -> int:
        if self.own(settings).weights == "auto":
            return (len(NODES) + len(BALANCING)) * settings.repeats
        return len(self.targets) * settings.repeats

    def run(self, bench) -> None:
        for node in NODES:
            bench.search(node)
        if self.own(bench.settings).weights == "profile":
            bench.search("cluster")
            return
        equal = {node: 1 for node in NODES}
        if self.own(bench.settings).weights == "equal":
            try:
                bench.balancer.set("equal", "roundrobin", equal)
                bench.search("cluster")
            finally:
                bench.balancer.restore()
            return
        capacities = {node: bench.capacity(node) for node in NODES}
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

    def summarize(self, bench, summary: dict) -> None:
        targets = summary["targets"]
        node_caps = [targets.get(n, {}).get("capacity_rps") for n in NODES]
        node_sum = round(sum(node_caps), 1) if all(node_caps) else None
        node1 = node_caps[0]
        cluster = targets.get("cluster", {}).get("capacity_rps")

        def gains(x: float | None) -> dict:
            e = round(x / node_sum, 3) if x and node_sum else None
            return {"efficiency": e, "efficiency_caveat": efficiency.caveat(e),
                    "cluster_over_node1": round(x / node1, 3) if x and node1 else None}
        if bench.balancer.choices:  # WEIGHTS=equal or auto: the cluster measured under each balancing choice
            summary["balancing"] = {
                choice: {**b, "capacity_rps": targets.get(f"cluster {choice}", targets.get("cluster", {}))
                         .get("capacity_rps"), "label": f"cluster {choice}" if f"cluster {choice}" in targets
                         else "cluster"} for choice, b in bench.balancer.choices.items() if choice != "restored"}
            for b in summary["balancing"].values():
                b.update(gains(b["capacity_rps"]))
            if cluster is None:  # WEIGHTS=auto: the cluster's capacity is the one under capacity weights
                cluster = summary["balancing"].get("weighted", {}).get("capacity_rps")
        summary.update({"sum_nodes_rps": node_sum, "cluster_rps": cluster, **gains(cluster)})
        why = {key: not_measured.why_missing(summary, labels) for key, labels in FIGURE_LABELS.items()
               if summary[key] is None}
        if why:
            summary["not_measured"] = why
        self._balance_hint(bench, summary)

    @staticmethod
    def _balance_hint(bench, summary: dict) -> None:
        """Which node set the cluster's pace and what weights would do (analysis/balance.py), for the cluster
        measured under the profile's or equal weights."""
        targets = summary["targets"]
        label = "cluster" if "cluster" in targets else "cluster equal" if "cluster equal" in targets else None
        if label is None:
            return
        figures = targets[label].get("metrics_at_capacity") or {}
        if Cluster.own(bench.settings).weights == "profile":
            weights = node_numbers(bench.cluster_settings(), "WEIGHT", NODES)
        else:  # WEIGHTS=equal, or auto's first choice
            weights = summary.get("balancing", {}).get("equal", {}).get("weights") or {}
        found = balance.hint({n: targets.get(n, {}).get("capacity_rps") for n in NODES}, weights,
                             targets[label].get("capacity_rps"),
                             {n: (figures.get(n) or {}).get("cpu_pct_of_quota") for n in NODES})
        if found:
            summary["balance_hint"] = found

    def console(self, summary: dict) -> None:
        print_capacities(summary)
        why = summary.get("not_measured") or {}

        def shown(key: str, unit: str = "") -> str:
            return figure(summary[key], unit) if summary[key] is not None else why.get(key, "not measured")
        if len(why) == len(FIGURE_LABELS) and len(set(why.values())) == 1:  # one loss took them all: said once
            print(f"ΣX_i, X_cluster, E, X_cluster / X_node1: {next(iter(why.values()))}")
        else:
            print(f"{'ΣX_i':<10}{shown('sum_nodes_rps', '/s'):>12}")
            print(f"{'X_cluster':<10}{shown('cluster_rps', '/s'):>12}")
            print(f"E = X_cluster / ΣX_i = {shown('efficiency')}    X_cluster / X_node1 = {shown('cluster_over_node1')}")
        if efficiency.caveat(summary["efficiency"]):
            print(f"note: {efficiency.caveat(summary['efficiency'])}")
        if summary.get("balance_hint"):
            print(f"balance: {summary['balance_hint']['text']}")
        for choice, b in summary.get("balancing", {}).items():
            weights = ":".join(str(w) for w in b["weights"].values())
            capacity = figure(b["capacity_rps"], "/s") if b["capacity_rps"] else "none"
            print(f"  balancing {choice:<10} balance {b['balance']:<10} weights {weights:<10} "
                  f"X_cluster {capacity:>9}  E {figure(b['efficiency'])}")
            if efficiency.caveat(b["efficiency"]):
                print(f"    note: {efficiency.caveat(b['efficiency'])}")


KIND = Cluster()
