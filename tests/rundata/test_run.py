"""What a run's record is (written from its type, read back the same) and what it says about its nodes: the cores
each may use, with a CPU quota or without one."""
from __future__ import annotations

from capbench.rundata.run import RunRecord, node_cpus


def _run(cpus: dict[str, str], processors: dict[str, int]) -> RunRecord:
    return RunRecord(cluster_settings={f"{node.upper()}_CPUS": value for node, value in cpus.items()},
                     nodes={node: {"available_processors": n} for node, n in processors.items()})


def test_a_quota_is_what_a_node_may_use_whatever_its_jvm_saw():
    """Under a quota of 0.5 the JVM reports 1 processor (it rounds up): the quota counts."""
    assert node_cpus(_run({"node1": "0.5", "node2": "0.3"}, {"node1": 1, "node2": 1})) == {"node1": 0.5, "node2": 0.3}


def test_without_a_quota_a_node_may_use_the_processors_its_jvm_saw():
    """The hosts profile (quota 0): each node its machine, so the figures count against that machine's cores."""
    assert node_cpus(_run({"node1": "0", "node2": "0.4"}, {"node1": 8, "node2": 1})) == {"node1": 8.0, "node2": 0.4}


def test_a_node_with_neither_is_left_out():
    """No quota and no JVM answer (the node was down at the start): no number rather than a wrong one."""
    run = _run({"node1": "0", "node2": "0.4"}, {"node2": 1})
    run.nodes["node1"] = {}
    assert node_cpus(run) == {"node2": 0.4}


def test_run_json_is_written_from_its_type_and_reads_back_the_same():
    """One shape, declared once: what the run writes is RunRecord's fields under the schema, and reads back equal."""
    from capbench.rundata.run import RUN_SCHEMA

    record = _run({"node1": "0.5"}, {"node1": 1})
    record.run_id, record.kind, record.targets = "20261202T100000Z-abc-cluster", "cluster", ["node1", "cluster"]
    written = record.to_json()
    assert written["schema"] == RUN_SCHEMA and "compose_version" not in written
    assert RunRecord.from_json(written) == record
    assert set(written) - {"schema"} == {f for f in RunRecord.__dataclass_fields__} - {"compose_version"}
