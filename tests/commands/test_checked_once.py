"""A command that measures checks its settings once: the check pass before the cluster is brought up and the run
after it share what was checked (capbench/commands/cli.py's dispatch), for tune as for bench."""
from __future__ import annotations

import os

import pytest

from capbench.commands import cli, tune
from capbench.commands.configuration import resolve
from capbench.engine import session
from capbench.settings.bench import SettingsError


def test_tune_reads_its_settings_once_for_the_check_and_the_run(monkeypatch, tmp_path):
    monkeypatch.setenv("RESULTS_DIR", str(tmp_path))
    monkeypatch.setenv("MAXTHREADS", "4,8")
    events = []
    real_checked = tune.checked
    monkeypatch.setattr(tune, "checked", lambda *a, **k: events.append("checked") or real_checked(*a, **k))
    monkeypatch.setattr(cli, "built_and_up", lambda: events.append("up") or 0)
    monkeypatch.setattr(session, "cluster_not_up", lambda: False)
    monkeypatch.setattr(tune, "sweep_run", lambda sweep, *rest: events.append(
        f"run {len(sweep.points)} points") or 0)
    config = resolve({}, {"PATH": "/usr/bin:/bin"})
    assert cli.dispatch("tune", [], [], config) == 0
    # The base's settings, then each point's (the baseline, 4 and 8 threads), all before the cluster is brought
    # up; the run shares them.
    assert events == ["checked"] * 4 + ["up", "run 3 points"]


def test_a_refused_tune_stops_before_anything_is_brought_up(monkeypatch, tmp_path, capsys):
    monkeypatch.setenv("RESULTS_DIR", str(tmp_path))
    monkeypatch.setenv("MAXTHREADS", "many")
    monkeypatch.setattr(cli, "built_and_up", lambda: (_ for _ in ()).throw(AssertionError("brought up")))
    assert cli.dispatch("tune", [], [], resolve({}, {"PATH": "/usr/bin:/bin"})) == 2
    assert "MAXTHREADS" in capsys.readouterr().err


def test_a_sweep_of_connection_lives_takes_one_driver_for_every_point(monkeypatch, tmp_path, capsys):
    # auto takes capload for a connection per user, oha or wrk2 for kept ones: the sweep takes capload for both,
    # each point checked with its own settings, the base's unchanged.
    monkeypatch.setenv("RESULTS_DIR", str(tmp_path))
    monkeypatch.setenv("CONNECTIONLIFE", "keep,per-user")
    monkeypatch.delenv("LOADGEN", raising=False)
    sweep = tune.read_sweep({"CONNECTIONLIFE": "keep,per-user"})
    tune.resolve(sweep, tune.base_settings(tune.checked()[0]))
    assert [p.baseline for p in sweep.points] == [True, False]  # keep, the configured life
    benches = tune.point_benches(sweep)
    assert {label: (s.connection_life, d.name) for label, (s, d, _) in benches.items()} == {
        "CONNECTIONLIFE=keep": ("keep", "capload"), "CONNECTIONLIFE=per-user": ("per-user", "capload")}
    assert "capload for every point" in capsys.readouterr().out
    assert "LOADGEN" not in os.environ


def test_a_point_its_driver_cannot_run_is_refused_by_its_label(monkeypatch, tmp_path):
    monkeypatch.setenv("RESULTS_DIR", str(tmp_path))
    monkeypatch.setenv("LOADGEN", "oha")
    sweep = tune.read_sweep({"CONNECTIONLIFE": "keep,per-user"})
    tune.resolve(sweep, tune.base_settings(tune.checked()[0]))
    with pytest.raises(SettingsError) as refused:
        tune.point_benches(sweep)
    assert str(refused.value).startswith("CONNECTIONLIFE=per-user: CONNECTION_LIFE='per-user' cannot run with "
                                         "LOADGEN=oha")
