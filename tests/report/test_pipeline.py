"""make gate's outputs read back by parsers we did not write: the JUnit XML file validated against the common JUnit
schema (Jenkins' junit-10.xsd, as pytest's own tests use it; make test fetches it from pytest's source release)
with xmlschema, and the OpenMetrics text parsed by prometheus_client's own parser."""
from __future__ import annotations

import json
import xml.etree.ElementTree as ElementTree

import xmlschema
from prometheus_client.openmetrics.parser import text_string_to_metric_families

from capbench.analysis import gate_verdict
from capbench.report import pipeline
from capbench.rundata.layout import GatePaths
from capbench.rundata.summary import Summary
from conftest import ROOT
from step_records import a_step

XSD = ROOT / ".capbench" / "tools" / "junit" / "junit-10.xsd"
CHECKS = [
    gate_verdict.Check("capacity node1", gate_verdict.FELL, "node1: 525/s now (3 repeats: 500, 525, 550) against 1050/s …",
               {"target": "node1", "baseline_rps": 1050.0, "rps": 525.0}),
    gate_verdict.Check("capacity cluster", gate_verdict.HOLDS, "cluster: 1400/s now … not wholly below the tolerance",
               {"target": "cluster", "baseline_rps": 1380.0, "rps": 1400.0}),
    gate_verdict.Check("capacity node2", gate_verdict.CANNOT_TELL, "node2: … repeat 2: invalid (the generator fell behind)",
               {"target": "node2", "baseline_rps": 600.0, "rps": None}),
    gate_verdict.Check("cluster p99 at 800/s", gate_verdict.ABOVE, "cluster p99 at 800/s: p99 612 ms … against 250 ms & <more>",
               {"target": "cluster"}),
]
GATE = gate_verdict.Gate("20261124T190000Z-abc1234-cluster", "20261124T180000Z-def5678-cluster", "named", 10.0, CHECKS,
                 ["build settings changed since the baseline: VARIANT v2 → v1"])
SUMMARY = Summary.from_json({
    "run_id": GATE.run_id, "kind": "cluster", "status": "complete",
    "calibration": {"ms_per_call": {"node1": 0.35, "node2": 0.4}},
    "targets": {"node1": {"capacity_rps": 525.0, "min_rps": 500.0},
                "cluster": {"capacity_rps": 1400.0, "min_rps": 1350.0}, "node2": {"capacity_rps": None}}})
STEPS = [a_step(target="cluster", label="cluster", offered_rps=1400.0, phase="confirm", latency_ms={"p99": 250.0})]


def test_junit_validates_against_the_common_schema_and_says_each_verdict(tmp_path):
    assert XSD.is_file(), f"{XSD} is missing: make test fetches it (the Makefile's JUNIT_XSD rule)"
    files = pipeline.write(GATE, "cluster", SUMMARY, STEPS, GatePaths(tmp_path / "run" / "gate"),
                           GatePaths(tmp_path / "latest"))
    junit = tmp_path / "run" / "gate" / "junit.xml"
    xmlschema.XMLSchema(str(XSD)).validate(str(junit))  # raises on the first violation
    cases = {case.get("name"): case for case in ElementTree.parse(junit).iter("testcase")}
    assert set(cases) == {c.name for c in CHECKS}
    assert cases["capacity node1"].find("failure").get("message").startswith("node1: 525/s now")
    assert cases["cluster p99 at 800/s"].find("failure").get("type") == gate_verdict.ABOVE
    assert cases["capacity node2"].find("error").get("type") == gate_verdict.CANNOT_TELL
    assert list(cases["capacity cluster"]) == [cases["capacity cluster"].find("system-out")]  # passed
    suite = next(ElementTree.parse(junit).iter("testsuite"))
    assert (suite.get("tests"), suite.get("failures"), suite.get("errors")) == ("4", "2", "1")
    assert [f.name for f in files] == ["junit.xml", "gate.json", "metrics.om", "metrics.prom"]
    assert all((tmp_path / "latest" / f.name).read_bytes() == f.read_bytes() for f in files)
    said = json.loads((tmp_path / "latest" / "gate.json").read_text())
    assert said["verdict"] == gate_verdict.FELL and said["exit_code"] == 3 and len(said["checks"]) == 4


def test_openmetrics_parses_with_prometheus_client():
    text = pipeline.openmetrics(GATE, "cluster", SUMMARY, STEPS, efficiency=0.91)
    assert text.endswith("# EOF\n")
    families = {f.name: f for f in text_string_to_metric_families(text)}
    def samples(name):
        return {tuple(sorted(s.labels.items())): s.value for s in families[name].samples}
    assert samples("capbench_capacity_requests_per_second") == {(("target", "node1"),): 525.0,
                                                                (("target", "cluster"),): 1400.0}
    assert samples("capbench_baseline_capacity_requests_per_second")[(("target", "node2"),)] == 600.0
    assert samples("capbench_p99_at_capacity_seconds") == {(("target", "cluster"),): 0.25}
    assert samples("capbench_scaleout_efficiency") == {(): 0.91}
    assert samples("capbench_calibration_call_seconds")[(("node", "node1"),)] == 0.00035
    assert samples("capbench_gate_exit_code") == {(): 3.0}
    passed = samples("capbench_gate_check_passed")
    assert passed[(("check", "capacity cluster"), ("verdict", "holds"))] == 1.0
    assert passed[(("check", "capacity node1"), ("verdict", "fell"))] == 0.0
    [info] = families["capbench_run"].samples
    assert info.labels["baseline"] == GATE.baseline_id and info.labels["verdict"] == gate_verdict.FELL


def test_prometheus_text_for_the_textfile_collector_parses_too(tmp_path):
    from prometheus_client.parser import text_string_to_metric_families as prometheus_families
    pipeline.write(GATE, "cluster", SUMMARY, STEPS, GatePaths(tmp_path / "gate"), GatePaths(tmp_path / "latest"))
    families = {f.name: f for f in prometheus_families((tmp_path / "gate" / "metrics.prom").read_text())}
    [exit_code] = families["capbench_gate_exit_code"].samples
    assert exit_code.value == 3.0
    assert {s.labels["target"]: s.value for s in families["capbench_capacity_requests_per_second"].samples} == \
        {"node1": 525.0, "cluster": 1400.0}


def test_a_duet_gates_metrics_carry_each_pair_the_interval_and_the_common_rates_ratios():
    from capbench.commands import gate_duet as duet_gate

    def pair(n, a_slot, b_slot, a, b):
        return {"pair": n, "a_slot": a_slot, "b_slot": b_slot, "a_rps": a, "b_rps": b,
                "a_lowest_failure_rps": a * 1.04, "b_lowest_failure_rps": b * 1.04, "same_instant": None}
    pairs = [pair(1, "node1", "node2", 800.0, 680.0), pair(2, "node2", "node1", 780.0, 650.0),
             pair(3, "node1", "node2", 820.0, 700.0), pair(4, "node2", "node1", 760.0, 640.0)]
    cpu = {"ratio": 1.012, "low": 0.98, "high": 1.045, "confidence": 0.9, "pairs": 4, "slot_effect": 0.99}
    written = {"run_id": "20261127T010000Z-abc-duet", "kind": "duet", "status": "complete", "targets": {},
               "duet": {"builds": [{"text": ""}, {"text": "CPUS=0.43"}], "slots": ["node1", "node2"], "pairs": pairs,
                        "common": {"share_pct": 80, "pairs": [], "intervals": {"cpu": cpu, "p99": None}}}}
    gate = duet_gate.judge(Summary.from_json(written), 8.0, aa=False)
    families = {f.name: f for f in text_string_to_metric_families(
        pipeline.openmetrics(gate, "duet", Summary.from_json(written), []))}
    ratios = {s.labels["pair"]: s.value for s in families["capbench_duet_ratio"].samples}
    assert set(ratios) == {"1", "2", "3", "4"} and 0.83 < ratios["2"] < 0.84
    assert {s.labels["bound"] for s in families["capbench_duet_ratio_interval"].samples} == {"low", "ratio", "high"}
    common = {(s.labels["figure"], s.labels["bound"]): s.value for s in families["capbench_duet_common_ratio"].samples}
    assert common == {("cpu", "low"): 0.98, ("cpu", "ratio"): 1.012, ("cpu", "high"): 1.045}
