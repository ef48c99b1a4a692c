"""make gate-calibrate's parts (capbench/commands/gate_calibration.py): the known drops from DUET_A, the figures from its duets,
and a duet gate refusing a tolerance below what its calibration calls, naming it, with no calibration of other
settings used."""
from __future__ import annotations

from dataclasses import replace

import pytest

from capbench.commands import gate_calibration
from capbench.commands.gate_calibration import AA, QUOTA, WORK, calibration_for, figures, known_drops, tolerance_problem
from capbench.kinds import read_settings

CLUSTER = {"NODE1_CPUS": "0.5", "NODE1_MEM": "768m", "NODE1_HEAP": "320m", "NODE1_GC": "auto", "NODE1_MAXCONN": "0"}


def test_the_known_drops_are_a_quota_five_percent_smaller_and_five_percent_more_work_from_a():
    settings = read_settings({})
    assert known_drops("", settings, CLUSTER) == {AA: "", QUOTA: "CPUS=0.475", WORK: "WORK_PCT=105"}
    assert known_drops("VARIANT=v3 CPUS=0.4", settings, CLUSTER) == {
        AA: "VARIANT=v3 CPUS=0.4", QUOTA: "VARIANT=v3 CPUS=0.38", WORK: "VARIANT=v3 CPUS=0.4 WORK_PCT=105"}
    # No quota to take 5 % from, and an executable JAR's requests are not the Grinder's: A/A alone is left.
    assert known_drops("", settings, {**CLUSTER, "NODE1_CPUS": "0", "APP_JAR": "/x.jar"}) == {AA: ""}


def duet(known: str, verdict: str, low: float, high: float) -> dict:
    return {"known": known, "verdict": verdict, "ratio": (low + high) / 2, "interval": [low, high], "se": 0.004}


def test_the_figures_count_false_alarms_and_power_and_give_the_smallest_drop_called():
    found = figures([duet(AA, "holds", 0.99, 1.01), duet(QUOTA, "fell", 0.93, 0.95), duet(AA, "fell", 0.96, 0.97),
                     duet(QUOTA, "cannot tell", 0.96, 0.98)], 2.5, 6)
    assert found["called_fell"] == {AA: "1/2", QUOTA: "1/2"} and found["false_alarms"] == "1/2"
    assert found["mean_ratio"][QUOTA] == pytest.approx(0.955)
    assert 0 < found["smallest_drop_pct"] < found["drop_called_at_tolerance_pct"]


def test_a_gate_refuses_a_tolerance_below_its_calibration_naming_it():
    calibration = {"smallest_drop_pct": 2.1, "measured": "2026-11-29T16:00:00Z"}
    said = tolerance_problem(2.0, calibration)
    assert "GATE_DROP_PCT='2' is below 2.1 %" in said and "make gate-calibrate, 2026-11-29T16:00:00Z" in said
    assert tolerance_problem(2.1, calibration) is None and tolerance_problem(0.5, None) is None


def test_a_calibration_of_other_settings_or_left_incomplete_is_not_used(tmp_path, monkeypatch):
    monkeypatch.setenv("RESULTS_DIR", str(tmp_path))
    settings = read_settings({"QUICK": "1"})
    made = {"complete": True, "smallest_drop_pct": 2.0, "settings": gate_calibration.figure_settings(settings, CLUSTER)}
    gate_calibration.jsonl.write_json(tmp_path / "gate-calibration.json", made)
    assert calibration_for(settings, CLUSTER) == made
    assert calibration_for(read_settings({"QUICK": "1", "DUET_WINDOWS": "6"}), CLUSTER) is None
    assert calibration_for(settings, {**CLUSTER, "NODE1_CPUS": "0.4"}) is None
    assert calibration_for(replace(settings, level=14), CLUSTER) is None
    gate_calibration.jsonl.write_json(tmp_path / "gate-calibration.json", {**made, "complete": False})
    assert calibration_for(settings, CLUSTER) is None
