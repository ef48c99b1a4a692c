"""Each kind's findings as summary.json carries them (capbench/rundata/findings.py, kinds/): read back as the kind's type,
and where a summary written before kinds had sections of their own kept them."""
from __future__ import annotations

from capbench.kinds import KINDS
from capbench.kinds.cluster_findings import BalancingChoice, ClusterFindings
from capbench.kinds.usl import UslFindings
from capbench.kinds.variants import VariantsFindings
from capbench.rundata.summary import Summary


def test_a_kinds_findings_are_read_back_as_its_type_and_other_entries_kept():
    choice = {"balance": "leastconn", "weights": {"node1": 1}, "label": "cluster leastconn", "capacity_rps": 900.0}
    written = {"schema": "capbench-summary/1", "run_id": "r", "kind": "cluster", "status": "complete", "targets": {},
               "cluster": {"efficiency": 0.9, "balancing": {"leastconn": choice}}, "soak": {"p99_ms": [12.0]}}
    summary = Summary.from_json(written)
    found = summary.findings(ClusterFindings)
    assert found.efficiency == 0.9 and found.balancing["leastconn"] == BalancingChoice(**choice)
    assert found.to_json()["balancing"]["leastconn"]["capacity_rps"] == 900.0
    assert summary.others["soak"] == {"p99_ms": [12.0]} and "schema" not in summary.others


def test_findings_written_before_kinds_had_sections_are_read_where_they_were():
    old = Summary.from_json({"run_id": "r", "kind": "cluster", "status": "complete", "targets": {},
                             "sum_nodes_rps": 1200.0, "efficiency": 0.875, "usl_points": [{"n": 1, "throughput_rps": 5.0}],
                             "usl_fit": {"error": "too few points"}, "variants": {"v1": {"node1_rps": 300.0}},
                             "variant_rounds": {"orders": [["v1"]]}})
    assert old.findings(ClusterFindings).efficiency == 0.875
    assert old.findings(UslFindings).points[0].throughput_rps == 5.0 and "error" in old.findings(UslFindings).fit
    variants = old.findings(VariantsFindings)
    assert variants.variants["v1"].node1_rps == 300.0 and variants.rounds == {"orders": [["v1"]]}
    assert Summary.from_json({"run_id": "r", "kind": "single", "status": "complete", "targets": {}}).findings(
        ClusterFindings) == ClusterFindings()


def test_each_kinds_findings_are_written_and_read_under_its_name():
    for name, kind in KINDS.items():
        if kind.findings is not None:
            assert kind.findings.kind == name, name
            empty = kind.findings()
            assert kind.found_in({name: empty.to_json()}) == empty, name
