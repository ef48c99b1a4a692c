"""The memory capacity of an application: kB of live heap per session from the steps' figures, the sessions a
heap holds, and the new users a second it sustains with its session timeout."""
from __future__ import annotations

import pytest

from capbench.analysis import memory_capacity
from step_records import a_step


def steps_with(points: list[tuple[float, float]]) -> list:
    return [a_step(i + 1, host_metrics={"node1": {"grind_requests_per_s": 1.0, "sessions_max": s,
                                                  "heap_floor_mb": h}}) for i, (s, h) in enumerate(points)]


def test_kb_per_session_sessions_held_and_new_users_per_second():
    # 40 MB of base heap and 64 kB a session (0.0625 MB), with a little noise either way.
    points = [(s, 40 + s * 0.0625 + (0.5 if i % 2 else -0.5)) for i, s in enumerate((200, 800, 1500, 2500, 3200))]
    m = memory_capacity.of_node(steps_with(points), "node1", heap_max_mb=320.0, timeout_s=1800)
    assert m["kb_per_session"] == pytest.approx(64, abs=1)
    assert 0 < m["kb_per_session_se"] < 1
    assert m["points"] == 5 and m["sessions_seen_max"] == 3200
    holds = (320 * 0.8 - 40) / 0.0625  # 3456 sessions fill the heap to 80 %
    assert m["sessions_heap_holds"] == pytest.approx(holds, rel=0.03)
    assert m["new_users_per_s"] == pytest.approx(holds / 1800, rel=0.03)
    line = memory_capacity.sentence("node1", m)
    assert "kB of live heap per session (5 steps, up to 3200 sessions)" in line
    assert "with a 30-minute session timeout it sustains about" in line


def test_too_few_sessions_give_no_figure():
    assert memory_capacity.of_node(steps_with([(1, 40), (2, 40), (3, 41), (4, 40)]), "node1", 320.0, 1800) is None
    assert memory_capacity.of_node(steps_with([(100, 40), (900, 90)]), "node1", 320.0, 1800) is None


def test_without_the_timeout_the_sustainable_rate_says_why():
    points = [(s, 40 + s * 0.01) for s in (100, 500, 900, 1300)]
    m = memory_capacity.of_node(steps_with(points), "node1", 320.0, None)
    assert m["new_users_per_s"] is None and "timeout was not read" in memory_capacity.sentence("node1", m)


def test_only_the_steps_a_node_served_in_count():
    # node2 idle beside node1's search: its sessions stay, its live heap drifts; no slope is made of that.
    steps = [a_step(i + 1, host_metrics={"node2": {"grind_requests_per_s": 0.0, "session_requests_per_s": 0.0,
                                                   "sessions_max": 100 + i * 60, "heap_floor_mb": 40 + i}})
             for i in range(6)]
    assert memory_capacity.of_node(steps, "node2", 248.0, 1800) is None


def test_a_slope_within_its_noise_is_not_a_memory_capacity():
    points = [(100, 40), (300, 48), (500, 41), (700, 47), (900, 43)]
    m = memory_capacity.of_node(steps_with(points), "node1", 320.0, 1800)
    assert m["sessions_heap_holds"] is None and m["new_users_per_s"] is None
    assert "not a memory capacity: its live heap did not follow" in memory_capacity.sentence("node1", m)


def test_a_capacity_that_starts_more_sessions_than_the_heap_sustains_says_when_the_heap_is_full():
    # The examples' SessionExample under oha (docs/findings.md): every request a new user with a 2-kB cart.
    capacities = {"node1": {"new_users_per_s": 45.6, "sessions_heap_holds": 82112},
                  "node2": {"new_users_per_s": None, "sessions_heap_holds": None}}
    at_capacity = {"node1": {"sessions_started_per_s": 750.0}, "node2": {"sessions_started_per_s": 3.0},
                   "lb": {}, "step": 15}
    short = memory_capacity.unsustained("node1 shop.yaml", at_capacity, capacities)
    assert short["nodes"] == {"node1": {"sessions_started_per_s": 750.0, "new_users_per_s": 45.6,
                                        "full_after_s": 109}}
    assert short["sentence"].startswith("node1 shop.yaml's capacity is not sustained by memory: at it node1 "
                                        "starts 750 sessions/s, more than the 45.6 new users/s")
    assert "full after about 109 s" in short["sentence"]
    # A rate the heap keeps up with, or no figure to judge by: nothing said.
    assert memory_capacity.unsustained("node1", {"node1": {"sessions_started_per_s": 40.0}}, capacities) is None
    assert memory_capacity.unsustained("node1", None, capacities) is None
    assert memory_capacity.unsustained("node1", at_capacity, {}) is None


def test_two_full_collections_around_a_search_make_the_figure_where_they_exist():
    # The CI run of 2026-11-28 (examples' carts, 4-s steps beside the other worker): step floors too noisy to fit
    # (3.87 ± 1.37 kB), while the search added 9004 sessions to a heap whose floors swung by 25 MB.
    floors = [(213, 33.4), (582, 52.0), (411, 15.2), (1415, 25.0), (2630, 32.9), (3931, 32.6), (1241, 57.2),
              (2979, 42.1), (4506, 43.8), (5791, 44.2), (7637, 68.1), (9004, 68.9)]
    assert "why_not" in memory_capacity.of_node(steps_with(floors), "node1", 309.4, 1800)
    state = {"nodes": {"node1": {"active": 0, "heap_live_mb": 40.0}}}
    after = {"nodes": {"node1": {"active": 9000, "heap_live_mb": 58.0}, "node2": {"unread": "down"}}}
    targets = {"node1 shop.yaml": {"searches": [{"state_before": state, "state_after": after}]},
               "cluster": {"searches": [{"state_before": None, "state_after": None}]}}
    collected = memory_capacity.collections_of(targets, "node1")
    assert collected == [((0.0, 40.0), (9000.0, 58.0))] and memory_capacity.collections_of(targets, "node2") == []
    m = memory_capacity.of_node(steps_with(floors), "node1", 309.4, 1800, collected)
    assert m["method"] == "collections" and m["kb_per_session"] == pytest.approx(18 / 9000 * 1024, abs=0.01)
    assert m["kb_per_session_se"] is None and m["base_heap_mb"] == 40.0
    holds = (309.4 * 0.8 - 40) / (18 / 9000)
    assert m["sessions_heap_holds"] == pytest.approx(holds, rel=0.001)
    assert m["new_users_per_s"] == pytest.approx(holds / 1800, abs=0.01)
    assert memory_capacity.sentence("node1", m).startswith(
        "node1: 2.05 kB of live heap per session (full collections before and after a search: 0 → 9000 sessions, "
        "40 → 58 MB); its 309 MB heap holds about")


def test_the_widest_search_counts_and_too_few_sessions_fall_back_to_the_steps():
    points = [(s, 40 + s * 0.0625) for s in (200, 800, 1500, 2500, 3200)]
    narrow = ((0.0, 40.0), (50.0, 43.0))  # 50 sessions: too few to say
    m = memory_capacity.of_node(steps_with(points), "node1", 320.0, 1800, [narrow])
    assert m["method"] == "steps" and m["kb_per_session"] == pytest.approx(64, abs=0.1)
    wide = ((100.0, 46.0), (2100.0, 171.0))  # 125 MB for 2000 sessions: 64 kB each
    m = memory_capacity.of_node([], "node1", 320.0, 1800, [narrow, wide])
    assert m["method"] == "collections" and m["sessions"] == [100, 2100] and m["kb_per_session"] == 64.0
    shrunk = ((0.0, 60.0), (5000.0, 55.0))  # a heap that shrank while sessions were added says nothing
    m = memory_capacity.of_node([], "node1", 320.0, 1800, [shrunk])
    assert m["sessions_heap_holds"] is None and "did not grow with the sessions" in memory_capacity.sentence("node1", m)
