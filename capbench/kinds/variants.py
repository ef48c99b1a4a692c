"""make bench-variants: the study's investigation. For each of VARIANTS, node1's capacity and the cluster's, then
one more step at each capacity during which thread dumps of every node in rotation are sampled (lock evidence,
capbench/profiling/threaddump.py) beside the PCP figures (allocation rate, % time in GC, CPU of quota). With REPEATS above one,
the variants are measured in rounds and compared within each round (capbench/analysis/rounds.py)."""
from __future__ import annotations

import subprocess
import threading
import time
from dataclasses import dataclass, replace

from capbench.analysis import rounds as rounds_analysis
from capbench.analysis.rounds import draw_orders
from capbench.engine.console import print_capacities
from capbench.engine.kind import Kind, KindSettings, Needs, Showing
from capbench.engine.progress import say
from capbench.hosts import jvm, topology
from capbench.hosts.backend import ClusterError
from capbench.profiling import threaddump
from capbench.report import story
from capbench.report.sections import Figure, ReportSection, RunResults, fragment_beside
from capbench.rundata.findings import Findings
from capbench.rundata.records import doc
from capbench.rundata.run import RunRecord, node_cpus
from capbench.rundata.summary import Summary
from capbench.settings.bench import VARIANTS
from capbench.settings.fields import choices, setting

DUMPS_PER_STEP = 4  # thread dumps of each node in rotation during an evidence step
# An evidence step lasts at least this long, whatever the search's steps: its dumps, a fifth of the step apart,
# stay a second apart, the spacing the QUICK steps of 5 s gave them, for which they were made and tested.
EVIDENCE_MIN_S = DUMPS_PER_STEP + 1


@dataclass(frozen=True)
class VariantsSettings(KindSettings):
    variants: tuple[str, ...] = setting("VARIANTS", " ".join(VARIANTS), choices(VARIANTS),
                                        "the Grinder variants measured on node1 and on the cluster (each round in an order drawn at "
                                        "random)")


@dataclass
class EvidenceStep:
    """One more step at a capacity found, with thread dumps of every node in rotation spread over it."""
    step: int = doc("its step number", default=0)
    offered_rps: float | None = doc("the capacity it ran at", default=None)
    passed: bool = doc("it met the SLO", default=False)
    p99_ms: float | None = doc("its corrected p99", default=None)
    thread_dumps: dict[str, dict] = doc("per node, the dumps' request threads by state and monitor "
                                        "(capbench/profiling/threaddump.py, summarize)", default_factory=dict)
    dump_errors: list[str] = doc("dumps that could not be taken", default_factory=list)


@dataclass
class VariantFigures:
    """One Grinder variant on node1 and on the cluster."""
    node1_rps: float | None = doc("node1's capacity", default=None)
    cluster_rps: float | None = doc("the cluster's capacity", default=None)
    cluster_over_node1: float | None = doc("the scale-out gain", default=None)
    evidence: dict[str, EvidenceStep] = doc("node1's and the cluster's evidence step, by target",
                                            default_factory=dict)


@dataclass
class VariantsFindings(Findings):
    """bench-variants: each variant's capacities and the evidence of what bound it."""
    kind = "variants"
    variants: dict[str, VariantFigures] = doc("per variant, in VARIANTS' order", default_factory=dict)
    orders: list[list[str]] = doc("each round's order of the variants, drawn at random", default_factory=list)
    rounds: dict | None = doc("REPEATS above one: per target (node1, cluster) each round's capacities compared "
                              "(capbench/analysis/rounds.py): table, round_best, wins, verdict, vs_baseline_pct; and the "
                              "orders", default=None)

    @classmethod
    def earlier(cls, summary: dict) -> dict | None:
        """Before it had a section of its own, `variants` held the variants and `variant_rounds` the rounds."""
        old = summary.get("variants")
        if not old or "variants" in old:
            return None
        return {"variants": old, "rounds": summary.get("variant_rounds")}


def gather_evidence(bench, found: VariantsFindings, target: str, variant: str) -> None:
    """One more step at the capacity found, with DUMPS_PER_STEP thread dumps of each node in rotation spread
    over it. Kept apart from the search: the dumps (short safepoints) must not move the capacity."""
    label = f"{target} {variant}"
    capacity = bench.capacity(label)
    if not capacity:
        return
    nodes = topology.IN_ROTATION[target]
    pids = {node: jvm.java_pid(node) for node in nodes}
    dumps: dict[str, list[str]] = {node: [] for node in nodes}
    errors: list[str] = []
    step_s = max(bench.settings.step_s, EVIDENCE_MIN_S)

    def sample(node: str) -> None:
        """Dumps at 1/5, 2/5, 3/5, 4/5 of the step (DUMPS_PER_STEP = 4), each node on its own thread."""
        began = time.monotonic()
        for k in range(1, DUMPS_PER_STEP + 1):
            time.sleep(max(0.0, began + k * step_s / (DUMPS_PER_STEP + 1) - time.monotonic()))
            try:
                dumps[node].append(jvm.thread_dump(node, pids[node]))
            except (ClusterError, OSError, subprocess.TimeoutExpired) as problem:
                errors.append(f"{node}: {problem}")

    # The samplers start when the step is sent to the load host; the generator starts within a second.
    samplers = [threading.Thread(target=sample, args=(node,), daemon=True) for node in nodes]
    for sampler in samplers:
        sampler.start()
    record = bench.steps.measure(target, 0, capacity, "evidence", label=label, duration_s=step_s)
    for sampler in samplers:
        sampler.join(timeout=60)
    locks = {}
    for node, texts in dumps.items():
        for k, text in enumerate(texts, start=1):
            bench.paths.thread_dump(record.step, node, k).write_text(text)
        locks[node] = threaddump.summarize(texts)
    found.variants.setdefault(variant, VariantFigures()).evidence[target] = EvidenceStep(
        record.step, capacity, record.passed, record.result.latency_ms.get("p99"), locks, errors)
    for node in nodes:
        say(f"{label} at {capacity:g}/s: {node}: {threaddump.describe(locks[node])}")


# Its part of report.html (capbench/report/sections.py): the study's investigation, with our numbers.
REPORT = fragment_beside(__file__)  # variants.html, a Jinja2 fragment


def report_values(results: RunResults) -> dict:
    from capbench.report.build import noise_band_pct  # matplotlib and jinja only when a report is made
    summary, cpus = results.summary, results.cpus
    found = results.findings(VariantsFindings)
    rows = story.variant_lines(summary, found.variants)
    repeated = any(len(t.repeats) > 1 for t in summary.targets.values())
    told = story.story(rows, noise_band_pct(results.run, summary), repeated=repeated,
                       quota_ratio=sum(cpus.values()) / cpus["node1"] if "node1" in cpus else None)
    return {"variants": rows, "story": told if rows else [], "rounds": found.rounds}


def report_figures(results: RunResults) -> list[Figure]:
    rows = story.variant_lines(results.summary, results.findings(VariantsFindings).variants)
    if not rows:
        return []
    from capbench.report import figures  # matplotlib only when a report is made
    return [("the study's investigation", figures.variants(rows, results.paths.figure("variants")))]


def round_table(targets: dict, target: str, variants: list[str], rounds: int) -> rounds_analysis.Table:
    """Each round's capacity of each variant on `target` (round r: the label's search of repeat r)."""
    found = {v: {s["repeat"]: s["capacity_rps"] for s in targets[f"{target} {v}"]["searches"]}
             if f"{target} {v}" in targets else {} for v in variants}
    return [{v: found[v].get(r) for v in variants} for r in range(1, rounds + 1)]


def compare_rounds(targets: dict, variants: list[str], orders: list[list[str]], precision_pct: float) -> dict:
    """Per target, the variants compared within each round (capbench/analysis/rounds.py), against the first variant."""
    out: dict = {"orders": orders}
    for target in ("node1", "cluster"):
        table = round_table(targets, target, variants, len(orders))
        out[target] = {"table": table, **rounds_analysis.compare(table, precision_pct, baseline=variants[0])}
    return out


def print_rounds(found: dict | None) -> None:
    if not found:
        return
    for target in ("node1", "cluster"):
        t = found[target]
        print(f"\n{target}, round by round (each round's order drawn at random):")
        for number, (order, capacities) in enumerate(zip(found["orders"], t["table"]), 1):
            cells = ", ".join(f"{v} {capacities[v] or 'none'}" + ("*" if v == t["round_best"][number - 1] else "")
                              for v in order)
            print(f"  round {number}: {cells}")
        wins = ", ".join(f"{v} {n}" for v, n in t["wins"].items())
        print(f"  {t['verdict']}; rounds won: {wins}")


class VariantsShown(Showing):
    """How bench-variants shows what it found (capbench/engine/kind.py's Showing)."""
    section = ReportSection((REPORT,), report_values, report_figures)

    def console(self, summary: dict, found: VariantsFindings) -> None:
        """The study's table: each variant on node1 and on the cluster, with what the evidence steps showed."""
        print(f"\n{'variant':<10}{'node1 /s':>9}{'cluster /s':>11}{'cl/node1':>9}   at node1's capacity: "
              "alloc MB/s, GC %, CPU % of quota; request threads")
        for row in story.variant_lines(Summary.from_json(summary), found.variants):
            cells = [f"{row[k]:.1f}" if row[k] else "none" for k in ("node1_rps", "cluster_rps")]
            gain = f"{row['cluster_over_node1']:.2f}" if row["cluster_over_node1"] else "-"
            shown = ["-" if row[k] is None else row[k] for k in ("alloc_mb_per_s", "gc_time_pct", "cpu_pct_of_quota")]
            print(f"{row['variant']:<10}{cells[0]:>9}{cells[1]:>11}{gain:>9}   {shown[0]} MB/s, GC {shown[1]} %, "
                  f"CPU {shown[2]} %; {threaddump.describe(row['dumps']) if row['dumps'] else 'no thread dumps'}")
        print_capacities(summary)
        print_rounds(found.rounds)


class Variants(Kind):
    name = "variants"
    workload = "grind"
    compares = "compares the Grinder's variants (VARIANTS)"
    description = "the study's steps: VARIANTS on node1 and the cluster, with GC, CPU and thread-dump lock evidence"
    shows = VariantsShown()
    targets = ("node1", "cluster")
    own_settings = VariantsSettings
    findings = VariantsFindings
    # the study's investigation: the profile says where each variant spends
    needs = Needs(profiles_by_default=True)

    def planned_searches(self, settings) -> int:
        return 2 * len(self.own(settings).variants) * settings.repeats

    def run(self, bench, found: VariantsFindings) -> None:
        """REPEATS rounds, each measuring every variant once (node1, then the cluster) in an order drawn at random
        for the round, so that a slow minute of the machine falls on every variant alike; the evidence steps
        in the last round."""
        cores = node_cpus(RunRecord.read(bench.paths.run_json))
        variants = self.own(bench.settings).variants
        rounds = bench.settings.repeats
        orders = [[variants[i - 1] for i in order] for order in draw_orders(len(variants), rounds, bench.run_id)]
        found.orders = orders
        for number, order in enumerate(orders, 1):
            if rounds > 1:
                say(f"round {number} of {rounds}: {', '.join(order)}")
            for variant in order:
                # The requests ask for this variant from now on (the URLs on the load host are written anew).
                bench.steps.change_settings(replace(bench.settings, variant=variant))
                bench.search("node1", label=f"node1 {variant}", repeats=1, profile=number == rounds)
                if number == rounds:  # while node1 alone is in rotation (the search routed it)
                    gather_evidence(bench, found, "node1", variant)
                node1 = bench.capacity(f"node1 {variant}")
                # The cluster starts near node1's capacity scaled by the cores (the nodes alone are not measured).
                guess = node1 * sum(cores.values()) / cores["node1"] if node1 and cores.get("node1") else None
                bench.search("cluster", label=f"cluster {variant}", repeats=1, estimate=guess,
                             profile=number == rounds)
                if number == rounds:
                    gather_evidence(bench, found, "cluster", variant)

    def summarize(self, bench, summary: dict, found: VariantsFindings) -> None:
        """Per variant: node1's and the cluster's capacity and the scale-out gain (its evidence is in)."""
        capacities = {label: t["capacity_rps"] for label, t in summary["targets"].items()}
        variants = self.own(bench.settings).variants
        for variant in variants:
            v = found.variants.setdefault(variant, VariantFigures())
            v.node1_rps, v.cluster_rps = capacities.get(f"node1 {variant}"), capacities.get(f"cluster {variant}")
            v.cluster_over_node1 = round(v.cluster_rps / v.node1_rps, 3) if v.node1_rps and v.cluster_rps else None
        found.variants = {v: found.variants[v] for v in variants}  # in VARIANTS' order
        if len(found.orders) > 1:
            found.rounds = compare_rounds(summary["targets"], list(variants), found.orders,
                                          bench.settings.precision_pct)


KIND = Variants()
