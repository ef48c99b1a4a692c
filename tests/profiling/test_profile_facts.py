"""What the console, the report and the hints say of a profile: the settings that turn it on, its overhead, and
the facts a bottleneck hint cites."""
from __future__ import annotations

import pytest

from capbench.analysis import profile_facts
from capbench.analysis.hints import Hint
from capbench.engine import profile_step
from capbench.kinds import KINDS
from capbench.profiling.record import Profile
from capbench.report.profiles import cited
from capbench.rundata.findings import from_json
from capbench.settings.bench import load_settings
from capbench.settings.fields import SettingsError

TABLES = {"cpu_samples": 400, "cpu_self": [{"name": "capbench.grinder.Grinder.grind", "count": 284, "total": 284}],
          "cpu_application": [{"name": "capbench.web.GrindServlet.doGet", "count": 360, "total": 360}],
          "monitors_ms": [{"name": "capbench.grinder.SynchronizedAllocatingGrinder", "count": 312, "total": 9812.0,
                           "largest": 95.0}],
          # A pool of one connection: the park's class is the pool's hand-off queue, its stack names the borrow.
          "parks_ms": [{"name": "java.util.concurrent.SynchronousQueue$TransferQueue", "count": 40, "total": 1500.0,
                        "largest": 80.0, "stack": ["com.zaxxer.hikari.util.ConcurrentBag.borrow",
                                                   "com.zaxxer.hikari.pool.HikariPool.getConnection"]}],
          "allocation_bytes": [{"name": "char[]", "total": 750.0}, {"name": "java.lang.String", "total": 250.0}],
          "old_objects": 40, "held_by": [{"name": "org.apache.catalina.session.StandardSession <- "
                                                  "org.apache.catalina.session.StandardManager", "count": 31}]}


@pytest.mark.parametrize(("value", "kind", "profiles"), [("auto", "variants", True), ("auto", "single", False),
                                                         ("on", "single", True), ("off", "variants", False)])
def test_jfr_auto_means_the_kinds_own_default(value, kind, profiles):
    settings = load_settings({"JFR": value}, {})
    assert profile_step.wanted(settings, KINDS[kind]) is profiles


def test_a_jfr_value_not_allowed_is_refused_with_what_is():
    with pytest.raises(SettingsError, match="JFR='yes'.*auto.*on.*off"):
        load_settings({"JFR": "yes"}, {})


def test_quick_steps_of_the_profile_are_shorter():
    assert load_settings({"QUICK": "1"}, {}).jfr.seconds == 10
    assert load_settings({}, {}).jfr.seconds == 60


def test_the_overhead_is_the_profiled_step_over_its_twin():
    found = profile_step.overhead({"achieved_rps": 500.0, "p99_ms": 100.0}, {"achieved_rps": 490.0, "p99_ms": 150.0})
    assert found == {"achieved_ratio": 0.98, "p99_ratio": 1.5}
    assert profile_step.overhead({"achieved_rps": 0.0, "p99_ms": None}, {"achieved_rps": 1.0, "p99_ms": 2.0}) == {
        "achieved_ratio": None, "p99_ratio": None}


def test_several_pairs_give_the_median_and_the_range_of_each_ratio():
    pairs = [{"overhead": {"achieved_ratio": r, "p99_ratio": p}} for r, p in ((0.9, 2.0), (1.0, 1.0), (0.95, None))]
    found = profile_step.overall(pairs)
    assert found == {"pairs": 3, "achieved_ratio": 0.95, "achieved_range": [0.9, 1.0], "p99_ratio": 1.5,
                     "p99_range": [1.0, 2.0]}
    assert profile_step.describe_overhead(found) == (
        "achieved 0.95× (0.9–1.0) and p99 1.5× (1.0–2.0) the unprofiled step's (median of 3 pairs, their order "
        "alternating; lowest–highest): the profile cost 5 % of the throughput, so its tables describe a server "
        "slowed by it")
    one = profile_step.overall(pairs[:1])
    assert profile_step.describe_overhead(one).startswith("achieved 0.9× and p99 2.0× the unprofiled step's: the "
                                                          "profile cost 10 %")
    cheap = profile_step.overall([{"overhead": {"achieved_ratio": 0.98, "p99_ratio": 1.1}}])
    assert profile_step.describe_overhead(cheap) == "achieved 0.98× and p99 1.1× the unprofiled step's"


def test_full_runs_measure_three_pairs_quick_ones_one():
    assert load_settings({}, {}).jfr.pairs == 3 and load_settings({"QUICK": "1"}, {}).jfr.pairs == 1


def test_the_summary_keeps_where_the_files_are_not_the_tables():
    profiles = {"node1": {"offered_rps": 500.0, "nodes": {"node1": {"recording": "r.jfr", "flame_graphs": {"cpu": "c"},
                                                                   "tables": TABLES, "heap_holders": []}}}}
    assert profile_step.brief(profiles) == {"node1": {"offered_rps": 500.0, "nodes": {
        "node1": {"recording": "r.jfr", "flame_graphs": {"cpu": "c"}}}}}


def test_the_headline_names_the_method_the_monitor_the_park_the_allocation_and_the_holder():
    line = profile_facts.headline(TABLES)
    assert line == ("71 % of 400 CPU samples in capbench.grinder.Grinder.grind; the application's: 90 % under "
                    "capbench.web.GrindServlet.doGet; 9.8 s blocked on the monitor of "
                    "capbench.grinder.SynchronizedAllocatingGrinder (312 waits of 10 ms or more); 1.5 s parked on "
                    "java.util.concurrent.SynchronousQueue$TransferQueue (40 waits of 10 ms or more, in "
                    "com.zaxxer.hikari.util.ConcurrentBag.borrow); 75 % of the sampled "
                    "allocation charged to char[]; 31 of 40 live objects sampled held by "
                    "org.apache.catalina.session.StandardSession <- org.apache.catalina.session.StandardManager")
    assert profile_facts.headline({}) == "nothing recorded"
    # Paths that name nobody (the recording written without them, or through the JDK's objects only) are no fact.
    assert profile_facts.top_holder({"old_objects": 3, "held_by": [{"name": "(no path to a GC root)", "count": 3}]}) \
        is None


def typed(profile: dict | None) -> Profile | None:
    """A label's profile as profiles.json's reader gives it."""
    return from_json(Profile, profile) if profile is not None else None


def test_a_hint_cites_its_nodes_profile_and_only_its_own_kind_of_fact():
    lock = Hint("lock", "node1", "node1: lock-bound? 12 threads busy")
    cpu = Hint("cpu", "node2", "node2: CPU saturated")
    profile = {"nodes": {"node1": {"tables": TABLES}}}
    lock_cited, cpu_cited = cited([lock, cpu], typed(profile))
    assert lock_cited.text.startswith("node1: lock-bound? 12 threads busy. The profile at this capacity: 9.8 s "
                                      "blocked on the monitor of capbench.grinder.SynchronizedAllocatingGrinder")
    assert "Grinder.grind" not in lock_cited.text
    assert cpu_cited == cpu  # node2 was not profiled
    assert cited([lock], None) == [lock]


def _request_threads(cpu_s: float, run_delay_s: float) -> dict:
    return {"name": "request threads", "threads": 25, "seconds": 10.0, "cpu_s": cpu_s, "run_delay_s": run_delay_s,
            "off_cpu_s": 250 - cpu_s - run_delay_s, "run_delay_share": round(run_delay_s / (cpu_s + run_delay_s), 3)}


def test_a_monitor_at_the_quota_whose_holder_waits_for_a_cpu_more_than_it_runs_is_cpu_starved():
    """v1 on half a core, the quota used up: request threads blocked on the Grinder's monitor while runnable ones
    (the holder among them) waited 3 s for a CPU for every 1 s on one: the throttled hint calls it starvation."""
    throttled = Hint("throttled", "node1", "node1: CPU-throttled")
    tables = {**TABLES, "request_threads": _request_threads(4.5, 13.5)}
    [said] = cited([throttled], typed({"nodes": {"node1": {"tables": tables}}}))
    assert ("9.8 s blocked on the monitor of capbench.grinder.SynchronizedAllocatingGrinder (312 waits of 10 ms "
            "or more), CPU-starved rather than lock-bound: the quota was used up and runnable request threads "
            "waited for a CPU 75 % of the time they could run (13.5 s against 4.5 s on one), so the monitor's "
            "holder was descheduled for most of the time it held it") in said.text


def test_a_monitor_at_the_quota_whose_holder_runs_is_the_locks_own():
    throttled = Hint("throttled", "node1", "node1: CPU-throttled")
    [said] = cited([throttled], typed({"nodes": {"node1": {"tables": {**TABLES,
                                                                "request_threads": _request_threads(8.0, 2.0)}}}}))
    assert ("9.8 s blocked on the monitor of capbench.grinder.SynchronizedAllocatingGrinder (312 waits of 10 ms "
            "or more), the lock's own: the quota was used up, yet runnable request threads waited for a CPU 20 % "
            "of the time they could run (2.0 s against 8.0 s on one), so the holder mostly ran while it held the "
            "monitor") in said.text
    # Without the kernel's figures, a holder at the quota may have been descheduled: both are said.
    [said] = cited([throttled], typed({"nodes": {"node1": {"tables": TABLES}}}))
    assert ("(312 waits of 10 ms or more), while the quota was used up: a holder descheduled until the next period "
            "keeps the others waiting, so these waits are CPU starvation as much as contention") in said.text
    assert profile_facts.starved_monitor({}) is None and profile_facts.request_thread_time(TABLES) is None


def test_a_lock_bound_node_cites_its_request_threads_time_without_a_verdict_on_the_quota():
    """Not at its quota, a node's runnable threads wait for the host's CPU, if any: the figures, no starvation."""
    lock = Hint("lock", "node1", "node1: lock-bound? 12 threads busy")
    tables = {**TABLES, "request_threads": _request_threads(8.0, 2.0)}
    [said] = cited([lock], typed({"nodes": {"node1": {"tables": tables}}}))
    assert ("25 request threads over 10.0 s: 8.0 s on a CPU, 2.0 s runnable and waiting for one (20 % of the time "
            "they could run), 240 s blocked, parked or idle") in said.text
    assert "starved" not in said.text and "quota" not in said.text


def test_no_kind_without_a_default_profiles_unasked():
    assert [name for name, kind in KINDS.items() if kind.needs.profiles_by_default] == ["variants"]
