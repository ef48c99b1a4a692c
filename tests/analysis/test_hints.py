"""The bottleneck rules fire on the figures they name, and only on those."""
from __future__ import annotations

from capbench.analysis import hints
from step_records import a_step


def node(cpu=50.0, busy=2.0, gc=1.0, rps=300.0) -> dict:
    return {"cpu_pct_of_quota": cpu, "cpu_quota": 0.5, "busy_threads_mean": busy, "gc_time_pct": gc,
            "alloc_mb_per_s": 900.0, "grind_requests_per_s": rps}


def kinds(found) -> list[tuple[str, str]]:
    return [(h.kind, h.host) for h in found]


def test_a_quiet_step_has_no_hint():
    assert hints.hints_for({"node1": node(), "lb": {"servers": {"node1": {"queue_max": 0}}},
                            "load": {"machine_cpu_busy_pct": 40.0}},
                           a_step(behind_schedule=0, intended=1000).result) == []


def test_cpu_saturation_names_the_node_and_its_figures():
    found = hints.hints_for({"node1": node(cpu=93.1), "node2": node(cpu=60.0)})
    assert kinds(found) == [("cpu", "node1")]
    assert found[0].figures["cpu_pct_of_quota"] == 93.1 and "93.1 %" in found[0].text


def test_a_node_throttled_by_its_quota_below_cpu_saturation():
    # The review's QUICK run: node3 broke the SLO at 68 % of its quota and no rule fired. Throttled in 40 % of
    # the periods, its threads waited 30 ms of every second for the quota to come back.
    found = hints.hints_for({"node3": {**node(cpu=68.0), "throttled_pct": 40.0, "throttled_ms_per_s": 30.0},
                             "node1": {**node(cpu=82.6), "throttled_pct": 24.9, "throttled_ms_per_s": 5.0}})
    assert kinds(found) == [("throttled", "node3")]
    assert "40 % of the periods" in found[0].text and found[0].figures["throttled_ms_per_s"] == 30.0


def test_many_busy_threads_with_cpu_to_spare_is_lock_bound():
    assert kinds(hints.hints_for({"node1": node(cpu=35.0, busy=40.0)})) == [("lock", "node1")]
    assert hints.hints_for({"node1": node(cpu=95.0, busy=40.0)})[0].kind == "cpu"  # busy because CPU-bound


def test_threads_waiting_on_a_full_database_pool_is_pool_bound_instead_of_lock_bound():
    pooled = {**node(cpu=30.0, busy=40.0), "db_pool_size": 10, "db_pool_active_mean": 9.8,
              "db_pool_waiting_mean": 27.5}
    [found] = hints.hints_for({"node1": pooled})
    assert (found.kind, found.host) == ("pool", "node1")
    assert "27.5 request threads waited" in found.text and "9.8 of the pool's 10" in found.text
    # Threads waiting while connections sit idle (a pool that is not the limit), or none waiting: not the pool.
    assert kinds(hints.hints_for({"node1": {**pooled, "db_pool_active_mean": 4.0}})) == [("lock", "node1")]
    assert hints.hints_for({"node1": {**node(), "db_pool_size": 10, "db_pool_active_mean": 10.0,
                                      "db_pool_waiting_mean": 0.2}}) == []


def test_a_saturated_or_throttled_database_and_its_lock_waits_are_named():
    db = {"cpu_pct_of_quota": 97.5, "cpu_quota": 0.4, "throttled_pct": 61.0, "connections_active_mean": 7.2,
          "lock_waits_mean": 0.1, "lock_waits_max": 1.0, "transactions_per_s": 1500.0}
    found = hints.hints_for({"node1": node(cpu=30.0), "db": db})
    assert kinds(found) == [("database", "db")]
    assert "PostgreSQL used 97.5 % of the database host's 0.4 CPU quota" in found[0].text
    assert kinds(hints.hints_for({"db": {**db, "cpu_pct_of_quota": 60.0, "throttled_pct": 30.0}})) == [("database", "db")]
    assert hints.hints_for({"db": {**db, "cpu_pct_of_quota": 60.0, "throttled_pct": 2.0}}) == []
    # A Grinder run's idle database (figures of a real one): throttled in the few periods its agents ran.
    idle = {"cpu_pct_of_quota": 0.3, "cpu_quota": 0.4, "throttled_pct": 30.7, "connections_active_mean": 0.0,
            "lock_waits_mean": 0.0, "transactions_per_s": 0.1}
    assert hints.hints_for({"node1": node(cpu=30.0), "db": idle}) == []
    locked = hints.hints_for({"db": {**db, "cpu_pct_of_quota": 20.0, "throttled_pct": 0.0, "lock_waits_mean": 3.4,
                                     "lock_waits_max": 9.0}})
    assert kinds(locked) == [("db-locks", "db")] and "3.4 backends waited for a lock" in locked[0].text


def test_gc_lb_queue_and_generator_rules():
    found = hints.hints_for({"node2": node(gc=12.5), "lb": {"servers": {"node2": {"queue_max": 7.0,
                                                                                  "queue_mean": 1.2}},
                                                            "backend_queue_max": 0},
                             "load": {"machine_cpu_busy_pct": 50.0}},
                            a_step(behind_schedule=30, intended=1000).result)
    assert kinds(found) == [("gc", "node2"), ("lb-queue", "lb"), ("generator", "load")]
    assert found[2].figures["behind_schedule_pct"] == 3.0


def test_nodes_out_of_rotation_and_missing_figures_fire_nothing():
    assert hints.hints_for({"node3": node(cpu=99.0, rps=0.0)}) == []
    assert hints.hints_for({"node1": {"grind_requests_per_s": 10.0}}) == []
    assert hints.hints_for(None) == []
