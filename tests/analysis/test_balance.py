"""The balance hint on the review's run: node1 168.8/s, node2 193.8/s, node3 103.1/s alone, the cluster 378.5/s
(E 0.813) under the profile's weights 5:4:3, node3 at 89.7 % of its quota and node2 at 67.4 %."""
from __future__ import annotations

import pytest

from capbench.analysis import balance

CAPACITIES = {"node1": 168.8, "node2": 193.8, "node3": 103.1}
WEIGHTS = {"node1": 5.0, "node2": 4.0, "node3": 3.0}


def test_the_weights_predict_where_the_cluster_saturates():
    # node1 gets 5/12 of the traffic and saturates first, at 168.8 x 12 / 5 = 405.1/s: E 0.870 predicted.
    predicted, first = balance.predicted_cluster(CAPACITIES, WEIGHTS)
    assert first == "node1" and predicted == pytest.approx(405.12)


def test_the_hint_names_the_pace_setter_and_the_weights_the_capacities_give():
    found = balance.hint(CAPACITIES, WEIGHTS, 378.5, {"node1": 80.0, "node2": 67.4, "node3": 89.7})
    assert found["pace_setter"] == "node3" and found["saturates_first"] == "node1"
    assert found["predicted_rps"] == 405.1 and found["predicted_efficiency"] == 0.87
    assert found["capacity_weights"] == {"node1": 87, "node2": 100, "node3": 53}
    assert "node3 set the pace" in found["text"] and "WEIGHTS=auto" in found["text"]
    assert "E 0.870; measured 0.813" in found["text"]


def test_no_hint_when_the_nodes_are_evenly_loaded_or_a_figure_is_missing():
    even = {"node1": 80.0, "node2": 72.0, "node3": 86.9}  # 14.9 points apart
    assert balance.hint(CAPACITIES, WEIGHTS, 378.5, even) is None
    assert balance.hint({**CAPACITIES, "node3": None}, WEIGHTS, 378.5, {"node1": 90.0, "node2": 50.0}) is None
    assert balance.hint(CAPACITIES, WEIGHTS, None, {"node1": 90.0, "node2": 50.0}) is None
