"""make bench-scaleout: the cluster's capacity with the first N nodes in rotation, N = 1, 2, … all of them (the
others in maintenance through HAProxy, as for a node alone), in rounds: each round measures every N once, so a
machine that slows for minutes shifts every point a little rather than one point a lot. Nodes that differ (the
default profile's) are also measured alone in each round, node2 … nodeK (node1 alone is N=1), for the ideal ΣX_i;
nodes alike (a homogeneous profile, the clean curve) have the ideal N·X(1). It reports X(N), the ideal, E(N), the
balancer's and the generator's CPU and the machine's idle CPU at each X(N), and the USL fitted over N
(capbench/analysis/scaling.py), without the points the harness limited."""
from __future__ import annotations

from dataclasses import asdict, dataclass

from capbench.analysis import scaling
from capbench.engine.console import print_capacities, print_usl_fit
from capbench.engine.kind import Kind, Showing
from capbench.hosts import topology
from capbench.hosts.cluster_settings import cluster_settings
from capbench.hosts.topology import first_nodes
from capbench.report.sections import Figure, ReportSection, RunResults, fragment_beside
from capbench.rundata.findings import Findings
from capbench.rundata.history import usl_figures
from capbench.rundata.records import StepRecord, doc, read_steps
from capbench.rundata.summary import Summary, TargetSummary, steps_at, targets_of


def curve() -> tuple[str, ...]:
    """The targets of the first 1, 2, … N nodes: N=1, N=2, …."""
    return tuple(first_nodes(k) for k in range(1, len(topology.NODES) + 1))


def next_guess(found: list[float]) -> float | None:
    """Where the search with one node more starts: the last capacity plus the last node's gain (with two nodes,
    twice one). A curve that bends gains less with each node, and a search started above the capacity fails steps
    first: X(N−1)·N/(N−1) began four to six failed steps above X(3) on both backends."""
    if not found:
        return None
    gain = found[-1] - found[-2] if len(found) > 1 else found[-1]
    return found[-1] + max(gain, 0.0)


def harness_figures(metrics: dict | None) -> dict:
    """At a point's capacity step (PCP): the balancer's and the generators' CPU in cores (all load hosts'), and
    the CPU the busiest load host's machine had left (%): on one machine, what every host shares."""
    metrics = metrics or {}
    loads = [metrics[host] for host in topology.LOAD_HOSTS if metrics.get(host)]
    busy = max((f["machine_cpu_busy_pct"] for f in loads if f.get("machine_cpu_busy_pct") is not None), default=None)
    cores = [f["generator_cpu_cores"] for f in loads if f.get("generator_cpu_cores") is not None]
    return {"lb_cpu_cores": (metrics.get("lb") or {}).get("haproxy_cpu_cores"),
            "generator_cpu_cores": round(sum(cores), 3) if cores else None,
            "machine_idle_pct": round(100 - busy, 1) if busy is not None else None}


def generator_cpu_pct(records: list[StepRecord], label: str, capacity: float | None) -> float | None:
    """The load host's CPU, in % of what it may use, in the label's last passed step at its capacity (the
    generator's own measure, with or without PCP), as the record writes it."""
    at = steps_at(records, label, capacity)
    usage = at[-1].result.loadhost if at else None
    return round(usage.cpu_pct, 1) if usage else None


@dataclass
class CurvePoint:
    """X(N): the cluster with its first N nodes in rotation, and the harness's CPU at that capacity."""
    n: int = doc("nodes in rotation")
    nodes: list[str] = doc("which ones", default_factory=list)
    capacity_rps: float | None = doc("X(N), the median of the repeats", default=None)
    repeats: list[float] = doc("each round's capacity at this N", default_factory=list)
    ideal_rps: float | None = doc("ΣX_i of the nodes in rotation measured alone, or N·X(1) for nodes alike",
                                  default=None)
    efficiency: float | None = doc("E(N) = X(N) / the ideal", default=None)
    limited_by: str | None = doc("why the harness, not the nodes, set X(N): left out of the fit", default=None)
    ideal_basis: str | None = doc("ΣX_i or N·X(1)", default=None)
    lb_cpu_cores: float | None = doc("HAProxy's CPU at X(N), cores (PCP)", default=None)
    generator_cpu_cores: float | None = doc("the generators' CPU at X(N), cores, all load hosts (PCP)", default=None)
    machine_idle_pct: float | None = doc("the idle CPU of the busiest load host's machine at X(N) (PCP)",
                                         default=None)
    generator_cpu_pct: float | None = doc("the load host's CPU in % of what it may use (the generator's count)",
                                          default=None)


@dataclass
class ScaleoutFindings(Findings):
    """bench-scaleout: the curve X(N) and the USL fitted over N."""
    kind = "scaleout"
    points: list[CurvePoint] = doc("one per N", default_factory=list)
    fit: dict = doc("the USL over N (capbench/analysis/scaling.py, fit_over_n): the fit and the points left out, or why "
                    "there is none", default_factory=dict)

    def usl(self) -> tuple[str, list[dict], dict] | None:
        """The shared USL section's points and fit: every repeat the harness did not limit."""
        if not self.points:
            return None
        points = [{"n": p.n, "throughput_rps": x} for p in self.points if not p.limited_by for x in p.repeats]
        return "nodes in rotation", points, self.fit or {"error": "no fit recorded"}


# Its part of report.html (capbench/report/sections.py): X(N), the ideal, E(N) and the harness's CPU at each N.
REPORT = fragment_beside(__file__)  # scaleout.html, a Jinja2 fragment


def report_values(results: RunResults) -> dict:
    found = results.findings(ScaleoutFindings)
    return {"scaleout": found, "scaleout_ideal": scaling.ideal_label([asdict(p) for p in found.points])}


def report_figures(results: RunResults) -> list[Figure]:
    found = results.findings(ScaleoutFindings)
    if not found.points:
        return []
    from capbench.report import build, figures  # matplotlib only when a report is made
    fit = build.usl_section(results.summary, ScaleoutShown.section)["fit"]
    return [("scale-out", figures.scaleout_curve([asdict(p) for p in found.points], fit,
                                                 results.paths.figure("scaleout")))]


def usl_points(summary: Summary) -> tuple[str, list[dict], dict] | None:
    return summary.findings(ScaleoutFindings).usl()


class ScaleoutShown(Showing):
    """How bench-scaleout shows what it found (capbench/engine/kind.py's Showing)."""
    section = ReportSection((REPORT,), report_values, report_figures, usl=usl_points)

    def history(self, found: ScaleoutFindings) -> dict:
        """E(N) at each N (its X(N) are the capacities of its targets N=1, N=2, …), and the USL over N."""
        return {"scaleout": {str(p.n): p.efficiency for p in found.points} or None, "usl": usl_figures(found.fit)}

    def console(self, summary: dict, found: ScaleoutFindings) -> None:
        print_capacities(summary)

        def shown(value, digits: int) -> str:
            return f"{value:.{digits}f}" if isinstance(value, (int, float)) else "n/a"
        print(f"\nideal: {scaling.ideal_label([asdict(p) for p in found.points])}")
        print(f"{'N':>3}{'X(N)/s':>10}{'ideal/s':>10}{'E(N)':>7}{'lb cores':>10}{'load CPU %':>12}{'idle %':>8}")
        for p in found.points:
            print(f"{p.n:>3}{shown(p.capacity_rps, 1):>10}{shown(p.ideal_rps, 1):>10}"
                  f"{shown(p.efficiency, 3):>7}{shown(p.lb_cpu_cores, 3):>10}{shown(p.generator_cpu_pct, 1):>12}"
                  f"{shown(p.machine_idle_pct, 1):>8}" + (f"  left out: {p.limited_by}" if p.limited_by else ""))
        print_usl_fit(found.fit, "USL over N")


class Scaleout(Kind):
    name = "scaleout"
    description = "the cluster's capacity with 1, 2, … all nodes in rotation: X(N), ideal, E(N), the USL over N"
    shows = ScaleoutShown()
    findings = ScaleoutFindings

    @property
    def targets(self) -> tuple[str, ...]:
        return curve() + self.alone()

    @staticmethod
    def alone() -> tuple[str, ...]:
        """The nodes measured alone besides N=1 for the ideal ΣX_i: none when the nodes are alike."""
        return () if scaling.nodes_alike(cluster_settings(), topology.NODES) else topology.NODES[1:]

    def run(self, bench, found: ScaleoutFindings) -> None:
        alone = self.alone()
        for _ in range(bench.settings.repeats):
            found = []
            for target in curve():
                bench.search(target, repeats=1, estimate=bench.capacity(target) or next_guess(found))
                if bench.capacity(target):
                    found.append(bench.capacity(target))
            for node in alone:
                bench.search(node, repeats=1)

    def summarize(self, bench, summary: dict, found: ScaleoutFindings) -> None:
        targets = targets_of(summary)
        none = TargetSummary()
        measured, harness = [], {}
        records = read_steps(bench.paths.steps)
        for target in curve():
            t = targets.get(target, none)
            at = harness_figures(t.metrics_at_capacity)
            at["generator_cpu_pct"] = generator_cpu_pct(records, target, t.capacity_rps)
            limit = scaling.harness_limit(100 * at["lb_cpu_cores"] if at["lb_cpu_cores"] is not None else None,
                                           at["generator_cpu_pct"])
            measured.append({"nodes": list(topology.IN_ROTATION[target]), "repeats": t.repeats, "limited_by": limit})
            harness[target] = at
        alone = {node: targets.get(node, none).capacity_rps for node in self.alone()}
        if alone:  # node1 alone is N=1
            alone[topology.NODES[0]] = targets.get(curve()[0], none).capacity_rps
        points = scaling.points(measured, alone)
        found.points = [CurvePoint(**p.as_dict(), **harness[first_nodes(p.n)]) for p in points]
        found.fit = scaling.fit_over_n(points)



KIND = Scaleout()
