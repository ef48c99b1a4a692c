"""What a run records when it breaks off (capbench/engine/runner.py execute): the summary says partial with the reason, the
PARTIAL marker stays, and a failure the harness did not foresee is raised again after it is recorded; a run that
lost a machine or a node on the way ends degraded, and one that broke off names the machine it lost."""
from __future__ import annotations

import json
import subprocess
from types import SimpleNamespace

import pytest

from capbench.engine import losses, runner
from capbench.engine.kind import Needs
from capbench.hosts.backend import ClusterError, LostMachine
from capbench.hosts.topology import HOSTS
from capbench.rundata.layout import RunPaths
from capbench.rundata.run import RunRecord

LAB3 = LostMachine("lab3", ("node2", "load2"), "its engine unix:///lab3.sock did not answer (connection refused)")


def bench_whose_run_raises(tmp_path, problem: BaseException | None, before=None):
    """A bench whose kind's run calls `before` with the bench, then raises `problem` (returns normally when None)."""
    def run(bench, found):
        if before is not None:
            before(bench)
        if problem is not None:
            raise problem
    kind = SimpleNamespace(needs=Needs(logs_whole_run=False, restores_rotation=False), run=run)
    return SimpleNamespace(paths=RunPaths(tmp_path), kind=kind, found=None, prepare=lambda: None,
                           monitoring=SimpleNamespace(monitor=None, finish=lambda: None),
                           run_record=lambda: RunRecord(run_id="test"), lb_events=SimpleNamespace(collect=lambda: None),
                           searcher=SimpleNamespace(losses=losses.Losses()))


@pytest.fixture(autouse=True)
def summary_of_the_outcome(monkeypatch):
    machines_lost(monkeypatch)  # every machine answers, unless a test says otherwise
    monkeypatch.setattr(runner, "summarize", lambda bench, status, error, started: {
        "run_id": "test", "kind": "single", "targets": {}, "status": status, "error": error, **({"events": bench.searcher.losses.as_json(started, [])}
                                             if bench.searcher.losses.events else {})})


def machines_lost(monkeypatch, *lost: LostMachine) -> list[tuple]:
    """The backend, as the recorder asks it: `lost` are the machines that do not answer; the questions asked."""
    asked = []

    def lost_machines(hosts):
        asked.append(tuple(hosts))
        return [m for m in lost if set(m.roles) & set(hosts)]
    monkeypatch.setattr(losses, "backend", lambda: SimpleNamespace(lost_machines=lost_machines, database=False))
    return asked


def test_a_host_command_past_its_timeout_ends_the_run_as_partial_with_the_reason(tmp_path):
    bench = bench_whose_run_raises(tmp_path, subprocess.TimeoutExpired(["sh", "-c", "curl"], 42))
    summary, code = runner.execute(bench)
    assert code == 1 and summary["status"] == "partial" and "timed out after 42 seconds" in summary["error"]
    assert json.loads(bench.paths.summary.read_text()) == summary and bench.paths.partial_marker.exists()


def test_an_unforeseen_failure_is_recorded_as_partial_then_raised(tmp_path):
    bench = bench_whose_run_raises(tmp_path, ValueError("Expecting value: line 1 column 1 (char 0)"))
    with pytest.raises(ValueError):
        runner.execute(bench)
    written = json.loads(bench.paths.summary.read_text())
    assert (written["status"], written["error"]) == ("partial", "ValueError: Expecting value: line 1 column 1 (char 0)")
    assert bench.paths.partial_marker.exists() and bench.paths.run_json.exists()


def test_a_run_that_ends_normally_is_complete_and_loses_its_marker(tmp_path):
    bench = bench_whose_run_raises(tmp_path, None)
    summary, code = runner.execute(bench)
    assert (summary["status"], code) == ("complete", 0) and not bench.paths.partial_marker.exists()


def test_a_run_that_lost_a_machine_on_the_way_ends_degraded_naming_it_with_every_role_it_ran(tmp_path, monkeypatch):
    machines_lost(monkeypatch, LAB3)
    bench = bench_whose_run_raises(tmp_path, None, before=lambda b: b.searcher.losses.seen(
        ["node2"], "HAProxy's health checks: still DOWN 30 s after step 12 failed"))
    summary, code = runner.execute(bench)
    assert (summary["status"], code) == ("degraded", 0) and not bench.paths.partial_marker.exists()
    [event] = summary["events"]
    assert (event["what"], event["machine"], event["roles"], event["hosts"]) == (
        "machine lost", "lab3", ["node2", "load2"], ["node2"])
    assert event["sentence"].startswith("node2's machine lab3 was lost at ")
    assert event["sentence"].endswith("(it ran node2, load2; HAProxy's health checks: still DOWN 30 s after step 12 "
                                      "failed; its engine unix:///lab3.sock did not answer (connection refused))")


def test_a_node_down_on_a_machine_that_answers_is_a_host_down_and_each_loss_is_said_once(tmp_path, monkeypatch):
    asked = machines_lost(monkeypatch)

    def twice(bench):
        bench.searcher.losses.seen(["node3"], "HAProxy's health checks: DOWN for 30 s before node3's search")
        bench.searcher.losses.seen(["node3"], "HAProxy's health checks: DOWN for 30 s before cluster's search")
    summary, code = runner.execute(bench_whose_run_raises(tmp_path, None, before=twice))
    # node3 asked after once; the run's end asks after every other host's machine
    assert (summary["status"], code) == ("degraded", 0) and asked == [("node3",), tuple(h for h in HOSTS if h != "node3")]
    assert [(e["what"], e["machine"], e["hosts"]) for e in summary["events"]] == [("host down", None, ["node3"])]
    assert "its machine still answers" in summary["events"][0]["sentence"]


def test_a_run_that_broke_off_asks_which_machine_went_and_names_it_without_calling_its_hosts_down(
        tmp_path, monkeypatch):
    machines_lost(monkeypatch, LostMachine("lab1", ("lb", "controller"), "the swarm's manager lists it down"))
    summary, code = runner.execute(bench_whose_run_raises(tmp_path, ClusterError("lb: curl exited 7")))
    assert (summary["status"], code) == ("partial", 1)
    assert [(e["machine"], e["hosts"]) for e in summary["events"]] == [("lab1", ["lb", "controller"])]
    assert "the run stopped (lb: curl exited 7); the swarm's manager lists it down" in summary["events"][0]["seen"]


def test_a_machine_lost_with_no_node_seen_down_is_named_at_the_run_s_end(tmp_path, monkeypatch):
    # The database's machine (or a load host's): no search ended, but the run did not end with every host.
    monkeypatch.setattr(losses, "backend", lambda: SimpleNamespace(database=True, lost_machines=lambda hosts: [
        LostMachine("lab5", ("db",), "the swarm's manager lists it down")] if "db" in hosts else []))
    summary, code = runner.execute(bench_whose_run_raises(tmp_path, None))
    assert (summary["status"], code) == ("degraded", 0)
    [event] = summary["events"]
    assert event["sentence"].startswith("db's machine lab5 was lost at ") and "asked at the run's end" in event["seen"]


@pytest.mark.parametrize("workload, ends", [("query", True), ("grind", False)])
def test_a_mostly_failed_step_ends_the_search_where_the_database_s_machine_is_lost_and_the_workload_needs_it(
        monkeypatch, workload, ends):
    # With the database's machine gone, every /query fails and HAProxy keeps the nodes UP: the search would step
    # down for minutes, measuring nothing (seen on the swarm lab, 2026-11-29: 26 steps of 0/s in 11 minutes).
    from capbench.engine.searcher import MOSTLY_FAILED_PCT, NodeDown, Searcher
    monkeypatch.setattr(losses, "backend", lambda: SimpleNamespace(database=True, lost_machines=lambda hosts: [
        LostMachine("lab5", ("db",), "its engine did not answer")] if "db" in hosts else []))
    searcher = Searcher(SimpleNamespace(settings=SimpleNamespace(workload=workload)), None, None)
    failed = SimpleNamespace(step=7, result=SimpleNamespace(failure_pct=100.0))
    lost = searcher.machine_lost_under("node1", failed)
    assert isinstance(lost, NodeDown) == ends and [e["machine"] for e in searcher.losses.events] == ["lab5"]
    if ends:
        assert lost.nodes == ["db"] and str(lost) == "db went down (its machine was lost: step 7 failed)"
    latency_only = SimpleNamespace(step=8, result=SimpleNamespace(failure_pct=MOSTLY_FAILED_PCT - 1))
    assert searcher.machine_lost_under("node1", latency_only) is None  # most failed steps: nothing asked
