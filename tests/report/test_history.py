"""results/history.jsonl's lines and the comparison of runs with a noise band."""
from __future__ import annotations

import pytest

from report import history
from rundata import jsonl

RUN = {"kind": "cluster", "settings": {"variant": "v1", "level": 13, "repeats": 3, "precision_pct": 5.0},
       "driver": {"name": "oha"}, "profile": "small", "cluster_settings": {"NODE1_CPUS": "0.5"}, "git_sha": "abc1234"}


def summary(run_id: str, node1: list[float], status: str = "complete") -> dict:
    caps = sorted(node1)
    return {"run_id": run_id, "kind": "cluster", "status": status, "driver": {"name": "oha"},
            "targets": {"node1": {"capacity_rps": caps[len(caps) // 2], "repeats": node1}}, "efficiency": 0.8}


def test_config_hash_ignores_repeats_but_not_the_workload():
    assert history.config_hash(RUN) == history.config_hash({**RUN, "settings": {**RUN["settings"], "repeats": 1}})
    assert history.config_hash(RUN) != history.config_hash({**RUN, "settings": {**RUN["settings"], "level": 14}})
    assert history.config_hash(RUN) != history.config_hash({**RUN, "cluster_settings": {"NODE1_CPUS": "0.6"}})
    levels = {**RUN, "settings": {**RUN["settings"], "usl_levels": [1, 2, 4, 8]}}
    assert history.config_hash(RUN) == history.config_hash(levels)  # not a bench-usl setting
    assert history.config_hash({**levels, "kind": "usl"}) != history.config_hash({**RUN, "kind": "usl"})


def test_default_compare_picks_the_last_two_complete_runs_of_one_config(tmp_path):
    path = tmp_path / "history.jsonl"
    other = {**RUN, "settings": {**RUN["settings"], "variant": "v3"}}
    for run, s in ((RUN, summary("r1", [600, 610, 620])), (other, summary("r2", [900, 910, 905])),
                   (RUN, summary("r3", [640, 650, 655])), (RUN, summary("r4", [700], status="partial"))):
        jsonl.append(path, history.history_line(run, s))
    usl_run = {**summary("r5", [1]), "targets": {}, "usl_fit": {"sigma": 0.6}}  # no capacity to compare
    jsonl.append(path, history.history_line(RUN, usl_run))
    a, b = history.pick(jsonl.read(path), None, None)
    assert (a["run_id"], b["run_id"]) == ("r1", "r3")
    assert jsonl.read(path)[-1]["usl"]["sigma"] == 0.6
    assert history.pick(jsonl.read(path), "r2", "r4")[1]["run_id"] == "r4"
    with pytest.raises(history.CompareError, match="matches 0 runs"):
        history.pick(jsonl.read(path), "r9", "r1")
    with pytest.raises(history.CompareError, match="both A= and B="):
        history.pick(jsonl.read(path), "r1", None)


def test_a_change_beyond_the_repeat_spread_is_significant_and_one_within_it_is_not():
    a = history.history_line(RUN, summary("a", [600, 610, 620]))    # spread 3.3 %, precision 5 %
    b = history.history_line(RUN, summary("b", [680, 690, 700]))    # +13.1 %
    c = history.history_line(RUN, summary("c", [590, 640, 600]))    # spread 8.3 %, change -1.6 %
    [up] = history.compare(a, b)
    assert up.change_pct == pytest.approx(13.1) and up.band_pct == 5.0 and up.significant
    [flat] = history.compare(a, c)
    assert flat.band_pct == pytest.approx(8.3) and not flat.significant
    # One repeat on a side: beyond the precision is "cannot tell" (None), within it is still not significant.
    [once] = history.compare(a, history.history_line(RUN, summary("d", [700])))
    assert once.significant is None and "one repeat" in once.basis
    [close] = history.compare(a, history.history_line(RUN, summary("e", [620])))
    assert close.significant is False


def test_make_compare_prints_each_change_and_its_verdict(tmp_path, monkeypatch, capsys):
    from report.__main__ import main
    monkeypatch.setenv("RESULTS_DIR", str(tmp_path))
    assert main(["compare"]) == 2 and "no two complete runs" in capsys.readouterr().err
    for name, caps in (("r1", [600, 610, 620]), ("r2", [680, 690, 700])):
        jsonl.append(tmp_path / "history.jsonl", history.history_line(RUN, summary(name, caps)))
    assert main(["compare"]) == 0
    out = capsys.readouterr().out
    assert "A r1 (abc1234)  →  B r2 (abc1234)" in out
    assert "node1" in out and "+13.1%" in out and "SIGNIFICANT" in out
    assert main(["history"]) == 0 and (tmp_path / "history.png").is_file()


def test_the_history_plot_joins_only_runs_of_one_configuration():
    lines = [{"config_hash": "a", "capacities": {"node1": 500.0}},
             {"config_hash": "b", "capacities": {"node1": 900.0}},  # another variant: not a trend
             {"config_hash": "a", "capacities": {"node1": 520.0, "cluster": 1200.0}}]
    assert history.series(lines) == {("node1", "a"): [0, 2], ("node1", "b"): [1], ("cluster", "a"): [2]}
