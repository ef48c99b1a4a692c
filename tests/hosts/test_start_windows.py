"""A Go duration as `docker compose config` writes a health check's start period, read back in seconds (the Swarm
backend waits as long as the nodes' longest: capbench/hosts/stack.py)."""
from __future__ import annotations

import pytest

from capbench.hosts.stack import duration_s, start_window_s


@pytest.mark.parametrize(("text", "seconds"), [("30s", 30), ("6m15s", 375), ("1h0m0s", 3600), ("8m20s", 500),
                                               ("500ms", 0.5), ("1m30.5s", 90.5), ("90", 90)])
def test_a_go_duration_in_seconds(text, seconds):
    assert duration_s(text) == seconds


@pytest.mark.parametrize("text", ["", "5 m", "5x", "m5", "5m junk"])
def test_what_is_not_a_duration_is_refused(text):
    with pytest.raises(ValueError, match="is not a duration"):
        duration_s(text)


def test_the_longest_start_window_is_the_nodes_alone():
    rendered = {"services": {"node1": {"healthcheck": {"start_period": "1m30s"}},
                             "node2": {"healthcheck": {"start_period": "2m30s"}},
                             "lb": {"healthcheck": {"start_period": "10m0s"}}, "db": {}}}
    assert start_window_s(rendered) == 150
    assert start_window_s({"services": {"lb": {}}}) == 0
