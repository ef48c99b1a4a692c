"""results/history.jsonl's lines, the comparison of runs (rank interval over the repeats, CANNOT TELL below three a
side, runs far apart or on other machines flagged) and the history plot's series and flags."""
from __future__ import annotations

from dataclasses import replace

import pytest

from capbench.analysis import history
from capbench.rundata import jsonl
from capbench.rundata.history import HistoryLine, read_history
from history_records import bench_hash, build_of, config_hash, history_line

RUN = {"kind": "cluster", "settings": {"variant": "v1", "level": 13, "repeats": 3, "precision_pct": 5.0},
       "driver": {"name": "oha"}, "profile": "small", "cluster_settings": {"NODE1_CPUS": "0.5"}, "git_sha": "abc1234"}


def typed(lines: list[dict]) -> list[HistoryLine]:
    return [HistoryLine.from_json(line) for line in lines]


def summary(run_id: str, node1: list[float], status: str = "complete") -> dict:
    caps = sorted(node1)
    return {"run_id": run_id, "kind": "cluster", "status": status, "driver": {"name": "oha"},
            "targets": {"node1": {"capacity_rps": caps[len(caps) // 2], "repeats": node1}},
            "cluster": {"efficiency": 0.8}}


def test_config_hash_ignores_repeats_but_not_the_workload():
    assert config_hash(RUN) == config_hash({**RUN, "settings": {**RUN["settings"], "repeats": 1}})
    assert config_hash(RUN) != config_hash({**RUN, "settings": {**RUN["settings"], "level": 14}})
    assert config_hash(RUN) != config_hash({**RUN, "cluster_settings": {"NODE1_CPUS": "0.6"}})
    levels = {**RUN, "settings": {**RUN["settings"], "usl_levels": [1, 2, 4, 8]}}
    assert config_hash(RUN) == config_hash(levels)  # not a bench-usl setting
    assert config_hash({**levels, "kind": "usl"}) != config_hash({**RUN, "kind": "usl"})


def test_a_grinder_run_hashes_as_before_the_database_and_a_query_run_by_its_pool():
    # A Grinder run recorded after the database came: the query settings and the DB_* keys it carries too.
    after = {**RUN, "settings": {**RUN["settings"], "workload": "grind", "session_kb": 4,
                                 "query": {"rows": 10, "join": 0, "write_pct": 0, "calls": 1}},
             "cluster_settings": {**RUN.get("cluster_settings", {}), "DB_POOL_SIZE": "10", "DB_CPUS": "0.4",
                                  "LB_STICKY": "none", "TOMCAT_SESSION_REPLICATION": "0"}}
    assert config_hash(after) == config_hash(RUN)
    assert bench_hash(after) == bench_hash(RUN) and build_of(after) == build_of(RUN)
    query = {**after, "settings": {**after["settings"], "workload": "query"}}
    assert config_hash(query) != config_hash(RUN)
    no_cache = {**query, "cluster_settings": {**query["cluster_settings"], "DB_CACHE_SIZE": "0",
                                              "DB_CACHE_TTL_S": "60"}}
    assert config_hash(no_cache) == config_hash(query)  # as before the cache existed
    cached = {**no_cache, "cluster_settings": {**no_cache["cluster_settings"], "DB_CACHE_SIZE": "1000"}}
    assert bench_hash(cached) == bench_hash(query) and build_of(cached)["DB_CACHE_SIZE"] == "1000"
    shorter = {**cached, "cluster_settings": {**cached["cluster_settings"], "DB_CACHE_TTL_S": "5"}}
    assert config_hash(shorter) != config_hash(cached)
    bigger = {**query, "cluster_settings": {**query["cluster_settings"], "DB_POOL_SIZE": "20"}}
    assert bench_hash(bigger) == bench_hash(query)  # the pool is the build, not the bench
    assert build_of(bigger)["DB_POOL_SIZE"] == "20" and config_hash(bigger) != config_hash(query)


def test_a_session_run_hashes_by_its_size_and_its_balancer_stickiness():
    session = {**RUN, "settings": {**RUN["settings"], "workload": "session", "session_kb": 4,
                                   "query": {"rows": 10, "join": 0, "write_pct": 0, "calls": 1}},
               "cluster_settings": {**RUN["cluster_settings"], "DB_POOL_SIZE": "10", "LB_STICKY": "none"}}
    assert config_hash(session) != config_hash(RUN)
    larger = {**session, "settings": {**session["settings"], "session_kb": 64}}
    assert config_hash(larger) != config_hash(session)
    other_query = {**session, "settings": {**session["settings"], "query": {"rows": 99}}}
    assert config_hash(other_query) == config_hash(session)  # not the session workload's
    other_pool = {**session, "cluster_settings": {**session["cluster_settings"], "DB_POOL_SIZE": "20"}}
    assert config_hash(other_pool) == config_hash(session)  # not on the database
    sticky = {**session, "cluster_settings": {**session["cluster_settings"], "LB_STICKY": "user"}}
    assert bench_hash(sticky) != bench_hash(session)  # the balancer is the bench
    replicated = {**session, "cluster_settings": {**session["cluster_settings"], "TOMCAT_SESSION_REPLICATION": "1"}}
    assert config_hash(replicated) != config_hash(session)


def test_clear_text_hashes_as_before_tls_was_a_setting_and_tls_at_the_balancer_is_another_bench():
    clear = {**RUN, "cluster_settings": {**RUN["cluster_settings"], "TLS": "off"}}
    assert config_hash(clear) == config_hash(RUN) and bench_hash(clear) == bench_hash(RUN)
    at_lb = {**RUN, "cluster_settings": {**RUN["cluster_settings"], "TLS": "lb"}}
    assert bench_hash(at_lb) != bench_hash(RUN)  # the balancer's work is the bench's, not the build's


def test_http_1_1_hashes_as_before_http_was_a_setting_and_http_2_is_another_bench():
    before = {**RUN, "settings": {**RUN["settings"], "http": "1.1"}}
    assert config_hash(before) == config_hash(RUN) and bench_hash(before) == bench_hash(RUN)
    h2 = {**RUN, "settings": {**RUN["settings"], "http": "2"}}
    assert bench_hash(h2) != bench_hash(RUN)


def test_connections_kept_for_the_step_hash_as_before_and_one_per_request_is_another_bench():
    kept = {**RUN, "settings": {**RUN["settings"], "connection_life": "keep"}}
    assert config_hash(kept) == config_hash(RUN) and bench_hash(kept) == bench_hash(RUN)
    per_request = {**RUN, "settings": {**RUN["settings"], "connection_life": "per-request"}}
    assert bench_hash(per_request) != bench_hash(RUN)


def test_default_compare_picks_the_last_two_complete_runs_of_one_config(tmp_path):
    path = tmp_path / "history.jsonl"
    other = {**RUN, "settings": {**RUN["settings"], "variant": "v3"}}
    for run, s in ((RUN, summary("r1", [600, 610, 620])), (other, summary("r2", [900, 910, 905])),
                   (RUN, summary("r3", [640, 650, 655])), (RUN, summary("r4", [700], status="partial"))):
        jsonl.append(path, history_line(run, s).to_json())
    usl_run = {**summary("r5", [1]), "kind": "usl", "targets": {}, "usl": {"fit": {"sigma": 0.6}}}  # no capacity
    jsonl.append(path, history_line(RUN, usl_run).to_json())
    a, b = history.pick(read_history(path)[0], None, None)
    assert (a.run_id, b.run_id) == ("r1", "r3")
    assert jsonl.read(path)[-1]["usl"]["sigma"] == 0.6
    assert history.pick(read_history(path)[0], "r2", "r4")[1].run_id == "r4"
    with pytest.raises(history.CompareError, match="matches 0 runs"):
        history.pick(read_history(path)[0], "r9", "r1")
    with pytest.raises(history.CompareError, match="both A= and B="):
        history.pick(read_history(path)[0], "r1", None)


def test_repeats_well_apart_are_significant_with_their_interval_and_its_confidence():
    a = history_line(RUN, summary("a", [600, 610, 620]))
    b = history_line(RUN, summary("b", [680, 690, 700]))    # +13.1 %, no overlap
    [up] = history.compare(a, b)
    assert up.verdict == "SIGNIFICANT" and up.change_pct == pytest.approx(13.1) and (up.a_repeats, up.b_repeats) == (3, 3)
    # 3 v 3: the only finite rank interval runs from the smallest to the largest b/a and covers 90 %, widened
    # by the 5 % search step on each side.
    assert up.interval.confidence == pytest.approx(0.9)
    assert up.interval.low == pytest.approx(680 / 620 / 1.05) and up.interval.high == pytest.approx(700 / 600 * 1.05)


def test_overlapping_repeats_or_a_change_within_one_search_step_are_not_significant():
    a = history_line(RUN, summary("a", [600, 610, 620]))
    [flat] = history.compare(a, history_line(RUN, summary("c", [590, 640, 600])))
    assert flat.verdict == "not significant" and flat.interval.low < 1 < flat.interval.high
    # Every repeat 3.3 % higher, less than the 5 % search step: the found capacities never overlap, the true
    # ones (each up to a step above the found one) may.
    steady = history_line(RUN, summary("s", [600, 600, 600]))
    [step] = history.compare(steady, history_line(RUN, summary("t", [620, 620, 620])))
    assert step.verdict == "not significant" and step.interval.low == pytest.approx(620 / 600 / 1.05)


@pytest.mark.parametrize("a_caps, b_caps, why", [
    ([600, 610, 620], [700], "3 repeats in A, 1 in B"),
    ([600, 610], [680, 690, 700], "2 repeats in A, 3 in B"),
])
def test_fewer_than_three_repeats_a_side_cannot_tell_and_says_why(a_caps, b_caps, why):
    [once] = history.compare(history_line(RUN, summary("a", a_caps)),
                             history_line(RUN, summary("b", b_caps)))
    assert once.verdict == "CANNOT TELL" and once.interval is None and why in once.why and "REPEATS=3" in once.why


CALIBRATION = {"probe": "v1 level 13", "ms_per_call": {"node1": 0.70, "node2": 0.72, "node3": 0.71},
               "node_cpu_ms": {"node1": 70.0, "node2": 72.0, "node3": 71.0}, "load_ms": 3.0, "machine": "m1"}


def test_runs_far_apart_on_other_machines_or_recalibrated_are_flagged():
    a = replace(history_line(RUN, {**summary("a", [600, 610, 620]), "calibration": CALIBRATION}),
                time="2026-11-22T10:00:00Z")
    near = replace(a, time="2026-11-22T20:00:00Z")
    assert history.caveats(a, near) == []
    assert history.hours_apart(a, near) == pytest.approx(10.0)
    assert history.caveats(a, replace(a, time="2026-11-23T10:30:00Z")) == ["24 h apart"]  # 24.5 h > FAR_APART_H
    faster = {**CALIBRATION, "node_cpu_ms": {"node1": 48.0, "node2": 50.0, "node3": 49.0}, "machine": "m2"}
    assert history.caveats(a, replace(near, calibration=faster)) == ["different machines", "node CPU probe -31.0 %"]
    # No calibration on one side (a run from before it): unknown, never "different".
    assert history.caveats(a, replace(near, calibration=None)) == []
    # The run's start (its id) stands in for a line without a time.
    assert history.hours_apart(HistoryLine(run_id="20261122T100000Z-abc-single"),
                               HistoryLine(run_id="20261124T100000Z-abc")) == 48.0


def test_the_history_line_carries_the_runs_calibration():
    assert history_line(RUN, {**summary("a", [600]), "calibration": CALIBRATION}).calibration == CALIBRATION
    assert history_line({**RUN, "calibration": CALIBRATION}, summary("a", [600])).calibration == CALIBRATION
    assert history_line(RUN, summary("a", [600])).calibration is None


def test_make_compare_prints_each_change_and_its_verdict(tmp_path, monkeypatch, capsys):
    from capbench.report.__main__ import main
    monkeypatch.setenv("RESULTS_DIR", str(tmp_path))
    assert main(["compare"]) == 2 and "no two complete runs" in capsys.readouterr().err
    for name, caps in (("r1", [600, 610, 620]), ("r2", [680, 690, 700])):
        jsonl.append(tmp_path / "history.jsonl", history_line(RUN, summary(name, caps)).to_json())
    assert main(["compare"]) == 0
    out = capsys.readouterr().out
    assert "A r1 (abc1234)  →  B r2 (abc1234)" in out
    assert "calibration (nodes' medians at idle: ms per Grinder call, CPU probe): A not recorded, B not recorded" in out
    row = next(line for line in out.splitlines() if line.startswith("node1"))
    assert "+13.1%" in row and "[+4.5%, +22.5%] at 90%" in row and row.endswith("SIGNIFICANT")
    assert "exact rank (Mann–Whitney) interval" in out and "E: 0.8 → 0.8" in out
    # A third run on another machine, two days on: flagged beside the verdict.
    calibrated = {**summary("r3", [650, 700, 720]), "calibration": {**CALIBRATION, "machine": "m2"}}
    jsonl.append(tmp_path / "history.jsonl", replace(history_line(RUN, calibrated), time="2099-01-01T00:00:00Z").to_json())
    assert main(["compare", "r2", "r3"]) == 0
    row = next(line for line in capsys.readouterr().out.splitlines() if line.startswith("node1"))
    assert "not significant [" in row and "h apart" in row
    assert main(["history"]) == 0 and (tmp_path / "history.png").is_file()


def test_the_history_plot_joins_only_runs_of_one_configuration_and_machine():
    lines = [{"config_hash": "a", "capacities": {"node1": 500.0}},
             {"config_hash": "b", "capacities": {"node1": 900.0}},  # another variant: not a trend
             {"config_hash": "a", "capacities": {"node1": 520.0, "cluster": 1200.0}},
             {"config_hash": "a", "capacities": {"node1": 700.0}, "calibration": CALIBRATION}]  # a known machine
    assert history.series(typed(lines)) == {("node1", "a", ""): [0, 2], ("node1", "b", ""): [1], ("cluster", "a", ""): [2],
                                      ("node1", "a", "m1"): [3]}


def test_the_history_plot_flags_a_changed_machine_or_calibration_since_the_configurations_last_run():
    nearly = {**CALIBRATION, "node_cpu_ms": {"node1": 75.0}}  # median 71 → 75: +5.6 %, within the noise
    slower = {**CALIBRATION, "node_cpu_ms": {"node1": 96.0, "node2": 97.0, "node3": 95.0}}  # 75 → 96: +28 %
    lines = [{"config_hash": "a", "calibration": CALIBRATION}, {"config_hash": "b"},
             {"config_hash": "a", "calibration": nearly}, {"config_hash": "a", "calibration": slower},
             {"config_hash": "a", "calibration": {**slower, "machine": "m2"}},
             {"config_hash": "a"}]  # unknown: no flag
    assert history.machine_flags(typed(lines)) == {3: ["node CPU probe +28.0 %"], 4: ["different machines"]}


def test_a_scaleout_curve_is_compared_point_by_point_and_keeps_its_fit(tmp_path):
    """bench-scaleout's points are its targets N=1, N=2, …: compare takes each with its repeats' confidence."""
    def curve(run_id: str, scale: float) -> dict:
        repeats = {f"N={n}": [scale * x * n for x in (500.0, 510.0, 520.0)] for n in (1, 2, 3, 4)}
        return {"run_id": run_id, "kind": "scaleout", "status": "complete", "driver": {"name": "oha"},
                "targets": {t: {"capacity_rps": r[1], "repeats": r} for t, r in repeats.items()},
                "scaleout": {"points": [{"n": n, "efficiency": 1.0} for n in (1, 2, 3, 4)],
                             "fit": {"sigma": 0.01, "kappa": 0.001, "lam": 510.0, "peak_n": 31.5, "r_squared": 0.99}}}
    run = {**RUN, "kind": "scaleout"}
    a, b = (history_line(run, curve(i, scale)) for i, scale in (("s1", 1.0), ("s2", 0.8)))
    assert a.usl["sigma"] == 0.01 and a.scaleout == {"1": 1.0, "2": 1.0, "3": 1.0, "4": 1.0}
    changes = history.compare(a, b)
    assert [c.target for c in changes] == ["N=1", "N=2", "N=3", "N=4"]
    assert all(c.change_pct == -20.0 and c.verdict == "SIGNIFICANT" for c in changes), changes


def test_the_history_plot_rings_a_figure_that_is_not_the_applications_and_shades_a_smoke_run(tmp_path, monkeypatch):
    from capbench.report import figures, history_plot
    drawn = {}
    monkeypatch.setattr(figures, "save", lambda fig, path: drawn.setdefault("fig", fig) and path)
    lines = [{"config_hash": "a", "capacities": {"node1": 500.0, "cluster": 1200.0}},
             {"config_hash": "a", "capacities": {"node1": 520.0, "cluster": 4107.0}, "smoke": True,
              "testbed_bound": {"cluster": "cluster's 4107/s is this machine's ceiling, not the application's"},
              "held_short": {"node1": "held 0 s of 60 s"}}]
    history_plot.plot(typed(lines), tmp_path / "history.png")
    ax = drawn["fig"].axes[0]
    ringed = {(line.get_marker(), tuple(line.get_xydata()[0])) for line in ax.lines
              if line.get_markerfacecolor() == "none" and len(line.get_xydata())}
    assert ringed == {("s", (1.0, 4107.0)), ("D", (1.0, 520.0))}
    assert {"testbed-bound: the testbed's ceiling", "held short of its hold"} <= set(ax.get_legend_handles_labels()[1])
    assert "SMOKE" in ax.get_xticklabels()[1].get_text() and "SMOKE" not in ax.get_xticklabels()[0].get_text()
    assert len(ax.patches) == 1  # the smoke run's shade
