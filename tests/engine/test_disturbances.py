"""summary.json's common part: the steps a lasting outage of a node disturbed, and the short flaps of an
overloaded node that it does not flag; HAProxy's DOWN/UP events they are read from (capbench/engine/balancing.py)."""
from __future__ import annotations

import pytest

from capbench.engine.balancing import LbEvents
from capbench.engine.run_summary import disturbances
from capbench.hosts import haproxy_log

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


def test_a_duet_label_is_judged_by_the_slot_each_step_ran_on():
    # B ran on node2 in the first pair and on node1 in the second; node1 was DOWN only in the first pair.
    steps = [{"label": "A", "target": "node1", "start_epoch": T0, "end_epoch": T0 + 60},
             {"label": "B", "target": "node2", "start_epoch": T0, "end_epoch": T0 + 60},
             {"label": "B", "target": "node1", "start_epoch": T0 + 200, "end_epoch": T0 + 260},
             {"label": "A", "target": "node2", "start_epoch": T0 + 200, "end_epoch": T0 + 260}]
    events = [{"node": "node1", "state": "DOWN", "epoch": T0 + 20}, {"node": "node1", "state": "UP", "epoch": T0 + 90},
              {"node": "node2", "state": "DOWN", "epoch": T0 + 120}, {"node": "node2", "state": "UP", "epoch": T0 + 190}]
    outages, flaps = disturbances(steps, events, until=T0 + 300)
    assert list(outages) == ["A"] and outages["A"][0].startswith("node1 went DOWN")  # not B's: it was on node2
    assert flaps == {}  # node2's outage fell between the pairs, while no step ran on it


def test_a_down_node_taken_through_maintenance_comes_back_up(monkeypatch):
    # HAProxy's own lines (a duet's routing puts both slots through maintenance after re-creating them): node1
    # came out of it serving, without an "is UP," line until the next time it failed and recovered.
    ring = """2026-11-27T04:27:13.208411Z Server nodes/node1 is DOWN, reason: Layer7 timeout, check duration: 504ms.
2026-11-27T04:27:35.260772Z Server nodes/node1 was DOWN and now enters maintenance.
2026-11-27T04:27:35.334627Z Server nodes/node1 is UP/READY (leaving forced maintenance).
2026-11-27T04:27:35.414145Z Server nodes/node2 is going DOWN for maintenance. 1 active and 0 backup servers left.
2026-11-27T04:27:35.503618Z Server nodes/node2 is UP/READY (leaving forced maintenance)."""
    monkeypatch.setattr(haproxy_log, "read_ring", lambda ring_name: ring)
    events = LbEvents(0.0)
    events.collect()
    assert [(e["node"], e["state"]) for e in events.events] == [("node1", "DOWN"), ("node1", "UP")]
    assert events.events[1]["epoch"] - events.events[0]["epoch"] == pytest.approx(22.126, abs=0.001)
