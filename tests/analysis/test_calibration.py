"""A run's calibration: the nodes' median, what differs between two runs' machines (beyond the noise only; an
absent calibration is unknown, not different) and the capacity per calibrated core."""
from __future__ import annotations

import pytest

from capbench.analysis import calibration
from capbench.rundata.run import RunRecord

M1 = {"probe": "v1 level 13", "ms_per_call": {"node1": 0.70, "node2": 0.72, "node3": 0.80},
      "node_cpu_ms": {"node1": 80.0, "node2": 81.0, "node3": 79.0}, "load_ms": 3.0, "machine": "m1"}


def test_the_nodes_median_and_an_absent_or_broken_calibration():
    assert calibration.node_ms(M1) == pytest.approx(0.72)
    assert calibration.of(RunRecord(calibration=M1)) == M1 and calibration.of(RunRecord()) is None \
        and calibration.of(None) is None
    assert calibration.node_ms(None) is None and calibration.node_ms({"ms_per_call": {"node1": None}}) is None
    assert calibration.node_cpu_ms(M1) == pytest.approx(80.0) and calibration.node_cpu_ms({"ms_per_call": {}}) is None
    assert calibration.describe(M1) == "0.720 ms/call, CPU probe 80 ms on m1"
    assert calibration.describe({"ms_per_call": {"node1": 0.5}}) == "0.500 ms/call"
    assert calibration.describe(None) == "not recorded"


def test_machines_differ_by_id_or_beyond_the_noise_and_unknown_is_not_different():
    assert calibration.differences(M1, M1) == []
    within = {**M1, "node_cpu_ms": {"node1": 90.0, "node2": 88.0, "node3": 91.0}}  # +12.5 %: the probe's noise
    assert calibration.differences(M1, within) == []
    beyond = {**M1, "node_cpu_ms": {"node1": 105.0, "node2": 106.0, "node3": 104.0}, "load_ms": 4.0}
    assert calibration.differences(M1, beyond) == ["node CPU probe +31.2 %", "load host calibration +33.3 %"]
    # The Grinder's time per call is not the machine: it moves with what each JVM compiled.
    recompiled = {**M1, "ms_per_call": {"node1": 0.95, "node2": 0.94, "node3": 0.96}}
    assert calibration.differences(M1, recompiled) == []
    # A run from before the CPU probe: unknown, not different.
    assert calibration.differences({**M1, "node_cpu_ms": None}, beyond) == ["load host calibration +33.3 %"]
    assert calibration.differences(M1, {**M1, "machine": "m2"}) == ["different machines"]
    assert calibration.differences(M1, None) == [] and calibration.differences({**M1, "load_ms": None}, M1) == []


def test_capacity_per_calibrated_core_uses_the_nodes_own_probe_and_the_median_for_the_cluster():
    assert calibration.calibrated_cores(650.0, "node1", M1) == pytest.approx(0.455)
    assert calibration.calibrated_cores(500.0, "node3 v2", M1) == pytest.approx(0.4)
    assert calibration.calibrated_cores(1000.0, "cluster", M1) == pytest.approx(0.72)
    assert calibration.calibrated_cores(650.0, "node1", None) is None
    assert calibration.calibrated_cores(None, "node1", M1) is None
