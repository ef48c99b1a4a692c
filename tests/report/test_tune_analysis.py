"""make tune's analysis: the best setting and its margin against the noise band, the effect against the
baseline, Little's law in the recommendation, the figure (bars, heatmap) and the page."""
from capbench.report import tune_report
from capbench.rundata.tune import TuneRecord, TuneRow
from step_records import a_step


def point(label, cap, values, repeats=None, baseline=False, figures=None):
    return TuneRow(label=label, values=values, capacity_rps=cap, repeats=repeats or ([cap] if cap else []),
                   spread_pct=(round(100 * (max(repeats) - min(repeats)) / sorted(repeats)[len(repeats) // 2], 1)
                               if repeats and len(repeats) > 1 else None),
                   baseline=baseline, figures=figures, folder=label, p99_ms=100.0, status="complete")


def threads_sweep(repeats=False):
    # 75 % of a 16-CPU quota = 12 cores at 600/s: 20 ms of CPU per request.
    figs = {"cpu_cores": 12.0, "busy_threads_mean": 30.5, "cpu_pct_of_quota": 75, "cpu_quota": 16, "gc_time_pct": 3}
    return [point("MAXTHREADS=1", 300, {"MAXTHREADS": "1"}, [290, 300, 310] if repeats else None),
            point("MAXTHREADS=4", 560, {"MAXTHREADS": "4"}, [550, 560, 570] if repeats else None, figures=figs),
            point("MAXTHREADS=16", 600, {"MAXTHREADS": "16"}, [590, 600, 610] if repeats else None, figures=figs),
            point("MAXTHREADS=200", 480, {"MAXTHREADS": "200"}, [470, 480, 490] if repeats else None,
                  baseline=True, figures=figs)]


def test_best_within_band_cannot_be_told_apart_and_the_fewest_threads_is_recommended():
    points = threads_sweep()
    result = tune_report.analyse(points, precision_pct=10)
    assert result["best"] == "MAXTHREADS=16" and result["runner_up"] == "MAXTHREADS=4"
    assert result["margin_pct"] == 7.1 and result["band_pct"] == 10
    assert result["verdict"].startswith("within the noise band")
    assert result["within_band"] == ["MAXTHREADS=4", "MAXTHREADS=16"]
    assert [p.vs_baseline_pct for p in points] == [-37.5, 16.7, 25.0, 0.0]
    # Little's law at the best: 600/s × 20 ms = 12 threads; 4 is below it, and the text says so.
    assert result["little"] == {"throughput_rps": 600, "cpu_ms_per_request": 20.0, "threads_needed": 12.0,
                                "busy_threads_measured": 30.5}
    assert "600/s × 20 ms of CPU per request = 12 threads running on average; PCP measured 30.5 busy" in \
        result["recommendation"]
    assert "Recommended: MAXTHREADS=4" in result["recommendation"]
    assert "below the 12 of Little's law" in result["recommendation"]


def test_a_margin_beyond_the_precision_with_one_repeat_is_cannot_tell_and_with_repeats_significant():
    assert tune_report.analyse(threads_sweep(), precision_pct=5)["verdict"].startswith("cannot tell: 7.1 %")
    result = tune_report.analyse(threads_sweep(repeats=True), precision_pct=5)
    assert result["verdict"] == "significant: 7.1 % over the next best, beyond the band ±5 %"
    assert result["within_band"] == ["MAXTHREADS=16"]
    assert "Recommended: MAXTHREADS=16" in result["recommendation"]
    assert "at least the 12 that Little's law asks for" in result["recommendation"]


def test_a_pool_sweep_recommends_the_fewest_connections_within_the_band_with_its_margin():
    # A database-bound node: 1 connection serialises the queries; from 4 on, the database, not the pool, limits.
    figs = {"cpu_cores": 0.1, "busy_threads_mean": 6.0, "db_pool_active_mean": 3.1}
    points = [point("POOLSIZE=1", 120, {"POOLSIZE": "1"}),
              point("POOLSIZE=4", 395, {"POOLSIZE": "4"}, figures=figs),
              point("POOLSIZE=16", 410, {"POOLSIZE": "16"}, figures=figs),
              point("baseline", 400, {}, baseline=True, figures=figs)]
    result = tune_report.analyse(points, precision_pct=10)
    assert result["best"] == "POOLSIZE=16" and result["within_band"] == ["POOLSIZE=4", "POOLSIZE=16", "baseline"]
    assert ("Recommended: POOLSIZE=4, the fewest pooled connections (each node's pool stays open in the shared "
            "database, which holds NODES × it) whose capacity is within the noise band of the best (the best point had "
            "3.1 of its connections in use on average): 395/s, 3.7 % under the best 410/s, inside the band of ±10 %."
            ) in result["recommendation"]


def test_the_baseline_competes_by_the_pool_size_it_measured():
    # The baseline sets nothing: PCP's db_pool_size says it ran with 10 connections, fewer than the best's 16.
    points = [point("baseline", 239.1, {}, baseline=True, figures={"db_pool_size": 10, "db_pool_active_mean": 9.0}),
              point("POOLSIZE=1", 181.8, {"POOLSIZE": "1"}),
              point("POOLSIZE=16", 243.4, {"POOLSIZE": "16"}, figures={"db_pool_size": 16, "db_pool_active_mean": 13.6})]
    result = tune_report.analyse(points, precision_pct=7)
    assert result["best"] == "POOLSIZE=16" and result["within_band"] == ["baseline", "POOLSIZE=16"]
    assert "Recommended: baseline (POOLSIZE=10), the fewest pooled connections" in result["recommendation"]
    assert "239.1/s, 1.8 % under the best 243.4/s, inside the band of ±7 %" in result["recommendation"]


def test_keep_the_baseline_when_nothing_beats_it_beyond_the_band():
    points = [point("baseline", 500, {}, baseline=True), point("PROTOCOL=nio2", 510, {"PROTOCOL": "nio2"})]
    result = tune_report.analyse(points, precision_pct=5)
    assert "Keep the baseline" in result["recommendation"]
    none = tune_report.analyse([point("baseline", None, {}, baseline=True)], precision_pct=5)
    assert none["best"] is None and "no setting met the SLO" in none["recommendation"]


def test_figures_bars_for_a_list_and_a_heatmap_for_a_grid_and_the_page(tmp_path):
    points = threads_sweep()
    result = tune_report.analyse(points, 5)
    bars = tune_report.figure(points, ["MAXTHREADS"], result, tmp_path / "bars.png")
    grid = [point(f"PROTOCOL={p} MAXTHREADS={t}", c, {"PROTOCOL": p, "MAXTHREADS": t})
            for p, t, c in (("nio", "4", 500), ("nio", "200", 450), ("nio2", "4", 520), ("nio2", "200", None))]
    heat = tune_report.figure(grid, ["PROTOCOL", "MAXTHREADS"], tune_report.analyse(grid, 5), tmp_path / "heat.png")
    for png in (bars, heat):
        assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and png.stat().st_size > 10_000
    tune = TuneRecord.from_json({"run_id": "t", "status": "complete", "target": "node1", "parameters": ["MAXTHREADS"],
                                 "settings": {"variant": "v1", "level": 13, "step_s": 5, "repeats": 1},
                                 "profile": "small", "figures_of": "node1", "points": []})
    page = tune_report.page(tune, points, result, bars, tmp_path / "tune.html")
    html = page.read_text()
    assert "data:image/png;base64," in html and "MAXTHREADS=16" in html and result["recommendation"] in html.replace(
        "&#39;", "'")


def test_make_report_rebuilds_a_tune_run_from_its_points(tmp_path):
    import json
    tune_json = {"run_id": "t", "status": "partial", "target": "node1", "parameters": ["MAXTHREADS"],
                 "settings": {"variant": "v1", "level": 13, "step_s": 5, "repeats": 1, "precision_pct": 15},
                 "profile": "small", "figures_of": "node1",
                 "points": [{"label": f"MAXTHREADS={n}", "values": {"MAXTHREADS": str(n)},
                             "env": {"TOMCAT_MAX_THREADS": str(n)}, "baseline": n == 200} for n in (4, 200)]}
    (tmp_path / "tune.json").write_text(json.dumps(tune_json))
    point = tmp_path / "points" / "01-MAXTHREADS=4"
    point.mkdir(parents=True)
    (tmp_path / "points" / "01-MAXTHREADS=4.interrupted-010203").mkdir()  # an interrupted attempt: ignored
    figures = {"cpu_pct_of_quota": 90.0, "cpu_quota": 0.5, "busy_threads_mean": 2.0, "gc_time_pct": 1.8}
    (point / "summary.json").write_text(json.dumps({"run_id": "p1", "kind": "single", "status": "complete",
                                                    "targets": {"node1": {"capacity_rps": 550.0, "repeats": [550.0],
                                                    "metrics_at_capacity": {"step": 3, "node1": figures,
                                                                            "lb": {"haproxy_cpu_cores": 0.21}}}}}))
    (point / "steps.jsonl").write_text(json.dumps(a_step(3, latency_ms={"p99": 123.4}).to_json()) + "\n")
    page = tune_report.rebuild(tmp_path)
    rebuilt = json.loads((tmp_path / "tune.json").read_text())
    first, second = rebuilt["rows"]
    assert (first["capacity_rps"], first["p99_ms"], first["figures"]["cpu_cores"]) == (550.0, 123.4, 0.45)
    assert first["figures"]["lb_cpu_cores"] == 0.21  # the balancer's beside the node's
    assert "<td class=\"num\">0.21</td>" in page.read_text()
    assert second["status"] == "not run" and second["capacity_rps"] is None
    assert rebuilt["analysis"]["best"] == "MAXTHREADS=4" and page.name == "tune.html"
    assert (tmp_path / "figures" / "tune.png").is_file()


def test_a_tune_run_in_rounds_is_judged_within_them_and_its_page_shows_each_round(tmp_path):
    import json
    tune_json = {"run_id": "t", "status": "complete", "target": "node1", "parameters": ["MAXTHREADS"],
                 "settings": {"variant": "v1", "level": 13, "step_s": 5, "repeats": 1, "precision_pct": 5},
                 "profile": "small", "figures_of": "node1", "rounds": 3, "orders": [[2, 1], [1, 2], [2, 1]],
                 "points": [{"label": f"MAXTHREADS={n}", "values": {"MAXTHREADS": str(n)},
                             "env": {"TOMCAT_MAX_THREADS": str(n)}, "baseline": n == 200} for n in (4, 200)]}
    (tmp_path / "tune.json").write_text(json.dumps(tune_json))
    # The machine slowed in round 2 for both; 4 threads ahead in every round.
    measured = {(1, 1): 550.0, (2, 1): 400.0, (3, 1): 560.0, (1, 2): 500.0, (2, 2): 370.0, (3, 2): 505.0}
    for (number, index), capacity in measured.items():
        folder = tmp_path / "points" / f"{index:02d}-MAXTHREADS={(4, 200)[index - 1]}" / f"round-{number}"
        folder.mkdir(parents=True)
        (folder / "summary.json").write_text(json.dumps({
            "run_id": f"p{number}{index}", "kind": "single", "status": "complete",
            "targets": {"node1": {"capacity_rps": capacity, "repeats": [capacity],
                                  "metrics_at_capacity": {"step": 3, "node1": {"cpu_pct_of_quota": 90.0}}}}}))
        (folder / "steps.jsonl").write_text(json.dumps(a_step(3, latency_ms={"p99": 10.0 * number}).to_json()) + "\n")
    page = tune_report.rebuild(tmp_path).read_text()
    rebuilt = json.loads((tmp_path / "tune.json").read_text())
    first, second = rebuilt["rows"]
    assert first["capacity_rps"] == 550.0 and first["round_capacities"] == [550.0, 400.0, 560.0]
    assert first["repeats"] == [550.0, 400.0, 560.0] and first["spread_pct"] == 29.1  # every round's repeats
    assert first["folder"] == "01-MAXTHREADS=4/round-1" and first["p99_ms"] == 10.0  # the round nearest the median
    assert rebuilt["round_table"][1] == {"MAXTHREADS=4": 400.0, "MAXTHREADS=200": 370.0}
    analysis = rebuilt["analysis"]
    assert analysis["best"] == "MAXTHREADS=4" and analysis["wins"] == {"MAXTHREADS=4": 3, "MAXTHREADS=200": 0}
    assert analysis["verdict"].startswith("significant: MAXTHREADS=4 beat MAXTHREADS=200 in all 3 rounds")
    assert second["vs_baseline_pct"] == 0.0 and first["vs_baseline_pct"] == 10.0  # 1.1, 1.081, 1.109: median
    assert "had the highest capacity of its round in 3 of 3 rounds" in analysis["recommendation"]
    assert "Round by round" in page and "<b>400.0</b>" in page and "2, 1" in page
    assert 'href="points/01-MAXTHREADS=4/round-1/report.html"' in page
