"""A command that measures checks its settings once: the check pass before the cluster is brought up and the run
after it share what was checked (capbench/commands/cli.py's dispatch), for tune as for bench."""
from __future__ import annotations

from capbench.commands import cli, tune
from capbench.commands.configuration import resolve
from capbench.engine import session


def test_tune_reads_its_settings_once_for_the_check_and_the_run(monkeypatch, tmp_path):
    monkeypatch.setenv("RESULTS_DIR", str(tmp_path))
    monkeypatch.setenv("MAXTHREADS", "4,8")
    reads, events = [], []
    real_checked = tune.checked
    monkeypatch.setattr(tune, "checked", lambda *a, **k: reads.append(1) or real_checked(*a, **k))
    monkeypatch.setattr(cli, "built_and_up", lambda: events.append("up") or 0)
    monkeypatch.setattr(session, "cluster_not_up", lambda: False)
    monkeypatch.setattr(tune, "sweep_run", lambda sweep, *rest: events.append(
        f"run {len(sweep.points)} points") or 0)
    config = resolve({}, {"PATH": "/usr/bin:/bin"})
    assert cli.dispatch("tune", [], [], config) == 0
    assert events == ["up", "run 3 points"]  # the baseline, then 4 and 8 threads
    assert len(reads) == 1


def test_a_refused_tune_stops_before_anything_is_brought_up(monkeypatch, tmp_path, capsys):
    monkeypatch.setenv("RESULTS_DIR", str(tmp_path))
    monkeypatch.setenv("MAXTHREADS", "many")
    monkeypatch.setattr(cli, "built_and_up", lambda: (_ for _ in ()).throw(AssertionError("brought up")))
    assert cli.dispatch("tune", [], [], resolve({}, {"PATH": "/usr/bin:/bin"})) == 2
    assert "MAXTHREADS" in capsys.readouterr().err
