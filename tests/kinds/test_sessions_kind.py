"""make bench-sessions' figures per session size (capbench/kinds/sessions.py): the most node1's JVM held over a size's
steps, and the table that says where the heap ran out."""
from __future__ import annotations

from capbench.kinds import sessions
from step_records import a_step


def step(label: str, heap: float | None, gc: float, held: int):
    return a_step(label=label, target="node1", host_metrics={
        "node1": {"heap_used_mb_max": heap, "gc_time_pct": gc, "sessions_max": held}, "lb": {}})


def test_the_jvm_figures_are_the_most_over_the_sizes_own_steps():
    records = [step("node1 16 kB", 90.0, 1.5, 2000), step("node1 16 kB", 160.5, 4.0, 5100),
               step("node1 64 kB", 300.0, 60.0, 4500), step("node1 16 kB", None, 2.0, 5300)]
    assert sessions.jvm_figures(records, "node1 16 kB") == {"heap_used_mb_max": 160.5, "gc_time_pct_max": 4.0,
                                                            "sessions_max": 5300, "steps": 3}
    assert sessions.jvm_figures(records, "node1 0 kB")["heap_used_mb_max"] is None


def test_the_table_names_the_collapse(capsys):
    summary = {"sessions": {"heap_max_mb": 309.0, "users": 10000, "sizes": {
        "0": {"kb": 0, "users_heap_mb": 0.0, "capacity_rps": 410.0, "heap_used_mb_max": 70.2,
              "heap_used_pct_max": 22.7, "gc_time_pct_max": 1.1, "sessions_max": 9100, "collapsed": False, "why": None},
        "64": {"kb": 64, "users_heap_mb": 625.0, "capacity_rps": None, "heap_used_mb_max": 301.0,
               "heap_used_pct_max": 97.4, "gc_time_pct_max": 71.0, "sessions_max": 4400, "collapsed": True,
               "why": "node1 DOWN"}}}}
    sessions.KIND.shows.console(summary, sessions.KIND.found_in(summary))
    out = capsys.readouterr().out
    assert "node1 by session size (10000 users; heap 309.0 MB)" in out
    assert "      64          625          -         301   97.4       71     4400   collapsed: node1 DOWN" in out


def test_a_scenarios_search_is_one_row_named_by_its_file(capsys):
    summary = {"sessions": {"heap_max_mb": 309.4, "users": 10000, "scenario": "shop.yaml", "sizes": {
        "node1 shop.yaml": {"kb": None, "label": "node1 shop.yaml", "users_heap_mb": None, "capacity_rps": 750.0,
                            "heap_used_mb_max": 191.8, "heap_used_pct_max": 62.0, "gc_time_pct_max": 3.43,
                            "sessions_max": 38183, "collapsed": False, "why": None}}}}
    sessions.KIND.shows.console(summary, sessions.KIND.found_in(summary))
    out = capsys.readouterr().out
    assert "node1 on the sessions of shop.yaml's users (heap 309.4 MB)" in out
    assert "       -            -        750       191.8     62     3.43    38183" in out
