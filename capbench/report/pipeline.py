"""make gate's outputs for a delivery pipeline, written with well-kept libraries: a JUnit XML file (junitparser; one
test case per check, its figures in the message: a fall or a threshold broken is a failure, cannot tell an
error), gate.json (the verdict, every check's figures), and the run's headline figures as OpenMetrics text
(prometheus_client; metrics.om) and in Prometheus' own text format (metrics.prom, for node_exporter's textfile
collector or a pushgateway): capacity per target and its repeats'
spread, the baseline's, E, p99 at capacity, the nodes' calibration, and the gate's verdict."""
from __future__ import annotations

import shutil
from pathlib import Path

from junitparser import Error, Failure, JUnitXml, TestCase, TestSuite
from prometheus_client import CollectorRegistry, generate_latest as prometheus_text
from prometheus_client.core import GaugeMetricFamily, InfoMetricFamily
from prometheus_client.openmetrics.exposition import generate_latest

from capbench.analysis.gate_verdict import ABOVE, CANNOT_TELL, FELL, Gate
from capbench.rundata import jsonl
from capbench.rundata.layout import GatePaths
from capbench.rundata.records import StepRecord
from capbench.rundata.summary import Summary, steps_at

GATE_SCHEMA = "capbench-gate/1"


def junit(gate: Gate, bench: str) -> JUnitXml:
    suite = TestSuite(f"capbench gate: bench-{bench}")
    for check in gate.checks:
        case = TestCase(check.name, classname=f"capbench.gate.{bench}")
        if check.verdict in (FELL, ABOVE):
            case.result = [Failure(check.message, type_=check.verdict)]
        elif check.verdict == CANNOT_TELL:
            case.result = [Error(check.message, type_=check.verdict)]
        case.system_out = f"{check.verdict}: {check.message}"
        suite.add_testcase(case)
    suite.update_statistics()
    xml = JUnitXml()
    xml.add_testsuite(suite)
    return xml


def gate_json(gate: Gate, bench: str) -> dict:
    return {"schema": GATE_SCHEMA, "run_id": gate.run_id, "bench": bench, "baseline": gate.baseline_id,
            "baseline_how": gate.baseline_how, "drop_pct": gate.drop_pct, "verdict": gate.verdict,
            "exit_code": gate.code, "notes": gate.notes,
            "checks": [{"name": c.name, "verdict": c.verdict, "message": c.message, **c.figures} for c in gate.checks]}


def p99_at_capacity(steps: list[StepRecord], label: str, capacity: float | None) -> float | None:
    at = [s for s in steps_at(steps, label, capacity) if s.result.latency_ms.get("p99") is not None]
    return at[-1].result.latency_ms["p99"] if at else None


class _Headline:
    """The run's figures as metric families (a prometheus_client collector, read once by generate_latest)."""

    def __init__(self, gate: Gate, bench: str, summary: Summary, steps: list[StepRecord],
                 efficiency: float | None = None):
        self.gate, self.bench, self.summary, self.steps = gate, bench, summary, steps
        self.efficiency = efficiency  # bench-cluster's E (its findings, as the history line has it)

    def collect(self):
        gate, summary = self.gate, self.summary
        yield InfoMetricFamily("capbench_run", "the run the figures are of", value={
            "run_id": gate.run_id or "", "bench": self.bench, "baseline": gate.baseline_id or "",
            "verdict": gate.verdict})
        capacity = GaugeMetricFamily("capbench_capacity_requests_per_second", "capacity: the highest rate meeting "
                                     "the SLO, median of the repeats", labels=["target"])
        low = GaugeMetricFamily("capbench_capacity_min_requests_per_second", "the lowest repeat's capacity",
                                labels=["target"])
        base = GaugeMetricFamily("capbench_baseline_capacity_requests_per_second", "the baseline's capacity",
                                 labels=["target"])
        p99 = GaugeMetricFamily("capbench_p99_at_capacity_seconds", "corrected p99 latency of the last step at the "
                                "capacity", labels=["target"])
        for label, target in summary.targets.items():
            if target.capacity_rps:
                capacity.add_metric([label], target.capacity_rps)
                low.add_metric([label], target.min_rps)
                at = p99_at_capacity(self.steps, label, target.capacity_rps)
                if at is not None:
                    p99.add_metric([label], round(at / 1000, 9))
        for check in gate.checks:
            if check.figures.get("baseline_rps") and check.name.startswith("capacity "):
                base.add_metric([check.figures["target"]], check.figures["baseline_rps"])
        yield from (capacity, low, base, p99)
        if self.efficiency is not None:
            yield GaugeMetricFamily("capbench_scaleout_efficiency", "E = X_cluster / sum of the nodes' capacities",
                                    value=self.efficiency)
        calibration = GaugeMetricFamily("capbench_calibration_call_seconds", "a probe call's time on an idle node "
                                        "(the machine's speed)", labels=["node"])
        for node, ms in ((summary.calibration or {}).get("ms_per_call") or {}).items():
            if ms:
                calibration.add_metric([node], round(ms / 1000, 9))
        yield calibration
        yield from duet_families(gate)
        verdicts = GaugeMetricFamily("capbench_gate_check_passed", "1 when the check holds, 0 when it fell, broke "
                                     "its threshold or cannot tell", labels=["check", "verdict"])
        for check in gate.checks:
            verdicts.add_metric([check.name, check.verdict], 1.0 if check.verdict == "holds" else 0.0)
        yield verdicts
        yield GaugeMetricFamily("capbench_gate_exit_code", "make gate's exit status", value=gate.code)


def duet_families(gate: Gate):
    """A duet gate's paired figures (capbench/commands/gate_duet.py): each pair's and each block's ratio B/A and the interval of
    the one judged."""
    for check in gate.checks:
        if not isinstance(check.figures.get("pairs"), list):
            continue
        ratios = GaugeMetricFamily("capbench_duet_ratio", "a duet pair's capacity ratio B/A, measured together",
                                   labels=["pair", "a_slot"])
        for pair in check.figures["pairs"]:
            if pair.get("ratio") is not None:
                ratios.add_metric([str(pair["pair"]), pair["a_slot"]], pair["ratio"])
        yield ratios
        blocks = GaugeMetricFamily("capbench_duet_block_ratio", "a duet block's goodput ratio B/A at one "
                                   "concurrency, measured together", labels=["block", "a_slot"])
        for block in check.figures.get("blocks") or []:
            if block.get("ratio") is not None:
                blocks.add_metric([str(block["block"]), block["a_slot"]], block["ratio"])
        yield blocks
        if check.figures.get("interval"):
            bounds = GaugeMetricFamily("capbench_duet_ratio_interval", "the ratio B/A the gate judged (the blocks', "
                                       "or the pairs' where it ran none; the slots' effect taken out) and its "
                                       "interval at the stated confidence", labels=["bound"])
            low, high = check.figures["interval"]
            for name, value in (("low", low), ("ratio", check.figures["ratio"]), ("high", high)):
                bounds.add_metric([name], value)
            yield bounds
            yield GaugeMetricFamily("capbench_duet_confidence", "the interval's confidence",
                                    value=check.figures["confidence"])
        common = GaugeMetricFamily("capbench_duet_common_ratio", "B/A at a rate both slots were offered together "
                                   "(figure: cpu, the JVM's CPU per request; p99), with its interval",
                                   labels=["figure", "bound"])
        for figure, interval in (check.figures.get("common") or {}).items():
            for bound in ("low", "ratio", "high") if interval else ():
                common.add_metric([figure, bound], interval[bound])
        yield common


def _registry(gate: Gate, bench: str, summary: Summary, steps: list[StepRecord],
              efficiency: float | None = None) -> CollectorRegistry:
    registry = CollectorRegistry()
    registry.register(_Headline(gate, bench, summary, steps, efficiency))
    return registry


def openmetrics(gate: Gate, bench: str, summary: Summary, steps: list[StepRecord],
                efficiency: float | None = None) -> str:
    return generate_latest(_registry(gate, bench, summary, steps, efficiency)).decode()


def write(gate: Gate, bench: str, summary: Summary, steps: list[StepRecord], folder: GatePaths,
          latest: GatePaths, efficiency: float | None = None) -> tuple[Path, ...]:
    """The files in the run's gate/ folder, and a copy of each in `latest` (a path a pipeline can name before it
    knows the run's id); `efficiency`: bench-cluster's E, where the run measured one."""
    folder.root.mkdir(parents=True, exist_ok=True)
    junit(gate, bench).write(str(folder.junit), pretty=True)
    jsonl.write_json(folder.gate_json, gate_json(gate, bench))
    folder.openmetrics.write_text(openmetrics(gate, bench, summary, steps, efficiency))
    # The same figures in Prometheus' text format 0.0.4, which node_exporter's textfile collector reads.
    folder.prometheus.write_bytes(prometheus_text(_registry(gate, bench, summary, steps, efficiency)))
    latest.root.mkdir(parents=True, exist_ok=True)
    for made, copy in zip(folder.files, latest.files):
        shutil.copyfile(made, copy)
    return folder.files
