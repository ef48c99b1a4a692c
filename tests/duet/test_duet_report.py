"""A duet's console tables (capbench/duet/report.py): a block whose windows measured neither slot is shown, not a
crash, and the interval judged is named."""
from __future__ import annotations

from capbench.duet import report as duet_report
from capbench.duet.findings import DuetFindings


def test_a_block_without_a_window_that_measured_both_slots_prints_dashes(capsys):
    duet = {"builds": [{"text": ""}, {"text": "CPUS=0.475"}], "slots": ["node1", "node2"], "pairs": [],
            "block_plan": {"windows": 2, "window_s": 3, "connections": 8},
            "blocks": [{"block": 1, "a_slot": "node1", "b_slot": "node2", "windows": [{"a_rps": None, "b_rps": 700.0}],
                        "ratio": None, "window_spread": None},
                       {"block": 2, "a_slot": "node2", "b_slot": "node1", "windows": [{"a_rps": 800.0, "b_rps": 760.0}],
                        "ratio": 0.95, "window_spread": None}],
            "blocks_interval": {"ratio": 0.95, "low": 0.94, "high": 0.96, "confidence": 0.9, "pairs": 3,
                                "slot_effect": 1.01}}
    duet_report.console(DuetFindings.from_json(duet))
    out = capsys.readouterr().out
    assert "    1   node1        -   node2        -        -       -" in out
    assert "    2   node2    800.0   node1    760.0        -   0.950" in out
    assert "over 3 blocks; node1's slot ran 1.010× node2's (taken out): the figure a duet gate judges" in out
