"""summary.json's common part: the steps a lasting outage of a node disturbed, and the short flaps of an
overloaded node that it does not flag."""
from __future__ import annotations

from load.run_summary import disturbances

T0 = 1_800_000_000.0


def test_a_lasting_outage_flags_the_steps_and_a_short_flap_does_not():
    steps = [{"label": "node3", "target": "node3", "start_epoch": T0, "end_epoch": T0 + 60},
             {"label": "cluster", "target": "cluster", "start_epoch": T0 + 100, "end_epoch": T0 + 200}]
    events = [{"node": "node3", "state": "DOWN", "epoch": T0 + 10}, {"node": "node3", "state": "UP", "epoch": T0 + 13},
              {"node": "node2", "state": "DOWN", "epoch": T0 + 150}]
    outages, flaps = disturbances(steps, events, until=T0 + 300)
    assert flaps == {"node3": 1}
    assert list(outages) == ["cluster"] and "node2 went DOWN at" in outages["cluster"][0]
    assert outages["cluster"][0].endswith("for 150 s")
