"""The build an accepted baseline stands for in a duet gate (capbench/duet/baseline.py): kept from the run's record
with its WAR copied (and refused when the WAR changed since the run), and run as A with only the words in which
it differs from the build configured now; with none accepted, the gate measures this build against itself and
cannot tell (capbench/commands/gate_duet.py)."""
from __future__ import annotations

import hashlib
import json
import zipfile
from pathlib import Path

import pytest

from capbench.analysis.gate_verdict import CANNOT_TELL, HOLDS
from capbench.commands import gate_duet as duet_gate
from capbench.duet import baseline as duet_baseline
from capbench.rundata.history import BaselineMark
from capbench.rundata.summary import Summary

CLUSTER = {"TOMCAT_PROTOCOL": "nio", "TOMCAT_MAX_THREADS": "200", "TOMCAT_MIN_SPARE_THREADS": "25",
           "TOMCAT_ACCEPT_COUNT": "100", "TOMCAT_MAX_CONNECTIONS": "8192", "TOMCAT_CONNECTION_TIMEOUT": "60000",
           "TOMCAT_KEEP_ALIVE_TIMEOUT": "", "TOMCAT_MAX_KEEP_ALIVE_REQUESTS": "100", "TOMCAT_SESSION_REPLICATION": "0",
           "DB_POOL_SIZE": "10", "NODE1_HEAP": "320m", "NODE1_GC": "auto", "NODE2_HEAP": "256m", "NODE1_CPUS": "0.5"}


@pytest.fixture(autouse=True)
def results(tmp_path, monkeypatch):
    monkeypatch.setenv("RESULTS_DIR", str(tmp_path / "results"))
    return tmp_path / "results"


def a_war(path, text="<web-app/>"):
    with zipfile.ZipFile(path, "w") as war:
        war.writestr("WEB-INF/web.xml", text)
    return path


def sha(path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def typed(summary: dict) -> Summary:
    """A duet's summary.json as the gate reads it."""
    return Summary.from_json({"kind": "duet", "targets": {}, **summary})


def a_run(folder, kind="single", settings=None, cluster=None, summary=None):
    folder.mkdir(parents=True)
    (folder / "run.json").write_text(json.dumps({"run_id": folder.name, "kind": kind,
                                                 "settings": {"variant": "v3", **(settings or {})},
                                                 "cluster_settings": {**CLUSTER, **(cluster or {})}}))
    if summary:
        (folder / "summary.json").write_text(json.dumps(summary))
    return folder


def test_a_grinder_runs_build_is_its_variant_connector_pool_and_node1s_jvm(tmp_path):
    words = duet_baseline.accepted_build(a_run(tmp_path / "r1", cluster={"TOMCAT_MAX_THREADS": "50"}))
    assert words["VARIANT"] == "v3" and words["TOMCAT_MAX_THREADS"] == "50" and words["DB_POOL_SIZE"] == "10"
    assert (words["HEAP"], words["GC"]) == ("320m", "auto")
    assert "TOMCAT_SESSION_REPLICATION" not in words and "CPUS" not in words and "WAR" not in words
    assert "TOMCAT_KEEP_ALIVE_TIMEOUT" not in words  # empty: Tomcat's own default, no word can give it


def test_an_applications_war_is_kept_by_its_content_and_refused_once_changed(tmp_path, results):
    war = a_war(tmp_path / "shop.war")
    run = a_run(tmp_path / "r2", cluster={"APP_WAR": str(war), "APP_SHA256": sha(war)})
    kept = duet_baseline.accepted_build(run)["WAR"]
    assert kept == str(results / "builds" / f"{sha(war)[:16]}.war") and sha(war) == sha(Path(kept))
    a_war(war, "<web-app>rebuilt</web-app>")  # the next build, written over the same path
    with pytest.raises(duet_baseline.BuildNotKept, match="changed since run r2 deployed it"):
        duet_baseline.accepted_build(run)
    older = a_run(tmp_path / "r3", cluster={"APP_WAR": str(war)})
    with pytest.raises(duet_baseline.BuildNotKept, match="did not record its WAR's sha256"):
        duet_baseline.accepted_build(older)


def test_an_executable_jar_is_kept_as_a_jar_and_a_later_one_runs_beside_it(tmp_path, results):
    jar = tmp_path / "orders.jar"
    jar.write_bytes(b"PK release 1")
    kept = duet_baseline.accepted_build(a_run(tmp_path / "r6", cluster={"APP_JAR": str(jar),
                                                                          "APP_SHA256": sha(jar)}))["JAR"]
    assert kept == str(results / "builds" / f"{sha(jar)[:16]}.jar") and Path(kept).read_bytes() == b"PK release 1"
    mark = BaselineMark("r6", None, "2026-11-27T06:00:00Z", "h", None, {"JAR": kept})
    assert duet_baseline.baseline_words(mark, {}, {**CLUSTER, "APP_JAR": str(jar)}) == {}  # the same content
    jar.write_bytes(b"PK release 2")
    assert duet_baseline.baseline_words(mark, {}, {**CLUSTER, "APP_JAR": str(jar)}) == {"JAR": kept}


def test_an_accepted_duet_stands_for_its_candidate(tmp_path):
    war = a_war(tmp_path / "candidate.war")
    summary = {"duet": {"builds": [{"node": {}}, {"node": {"IMAGE": f"capbench-node-app:{sha(war)[:16]}"}}]}}
    run = a_run(tmp_path / "r4", kind="duet", settings={"a": "", "b": f"WAR={war} TOMCAT_MAX_THREADS=64"},
                cluster={"APP_WAR": str(tmp_path / "main.war"), "APP_SHA256": "0" * 64}, summary=summary)
    words = duet_baseline.accepted_build(run)
    assert words["TOMCAT_MAX_THREADS"] == "64" and words["WAR"].endswith(f"builds/{sha(war)[:16]}.war")


def test_the_gate_runs_only_what_differs_from_this_build(tmp_path):
    main, same = a_war(tmp_path / "main.war"), a_war(tmp_path / "same.war")
    mark = BaselineMark("r5", None, "2026-11-27T05:00:00Z", "h", None,
                        {"VARIANT": "v3", "TOMCAT_MAX_THREADS": "50", "HEAP": "320m", "WAR": str(main)})
    now = duet_baseline.baseline_words(mark, {"variant": "v3"}, {**CLUSTER, "APP_WAR": str(same)})
    assert now == {"TOMCAT_MAX_THREADS": "50"}  # the same WAR's content under another name is the same build
    a_war(same, "<web-app>candidate</web-app>")
    assert duet_baseline.baseline_words(mark, {"variant": "v3"}, {**CLUSTER, "APP_WAR": str(same)}) == {
        "WAR": str(main), "TOMCAT_MAX_THREADS": "50"}


def test_the_baseline_is_the_one_named_else_the_last_kept_for_a_cluster_like_this():
    marks = [BaselineMark("20261127T0400Z-a", "release-1", "t", "h", None, {"VARIANT": "v3"}),
             BaselineMark("20261127T0500Z-b", None, "t", "h", None, {"WAR": "/r/builds/x.war"}),
             BaselineMark("20261127T0600Z-c", None, "t", "h", None, {}),  # its build could not be kept
             BaselineMark("20261127T0700Z-d", None, "t", "h", None, {"VARIANT": "v1"}),
             BaselineMark("20261127T0800Z-e", None, "t", "h", None, {"JAR": "/r/builds/y.jar"})]
    assert duet_baseline.chosen_mark(marks, None, app=None).run_id == "20261127T0700Z-d"
    assert duet_baseline.chosen_mark(marks, None, app="WAR").run_id == "20261127T0500Z-b"
    assert duet_baseline.chosen_mark(marks, None, app="JAR").run_id == "20261127T0800Z-e"
    assert duet_baseline.chosen_mark(marks, "release-1", app="WAR").run_id == "20261127T0400Z-a"
    assert duet_baseline.chosen_mark(marks, "20261127T0600", app=None) is None


def test_with_no_baseline_accepted_the_gate_cannot_tell():
    pairs = [{"pair": n, "a_slot": s, "b_slot": t, "a_rps": 800.0, "b_rps": 800.0 * r, "a_lowest_failure_rps": 840.0,
              "b_lowest_failure_rps": 840.0 * r, "ratio": r}
             for n, (s, t, r) in enumerate([("node1", "node2", 1.0), ("node2", "node1", 0.98),
                                            ("node1", "node2", 1.02), ("node2", "node1", 1.0)], start=1)]
    summary = {"run_id": "r6", "status": "complete", "duet": {"pairs": pairs, "builds": [{"text": ""}, {"text": ""}]}}
    [check] = duet_gate.judge(typed(summary), 10, aa=False, baseline="").checks
    assert check.verdict == CANNOT_TELL and check.message.startswith("no build accepted as a baseline yet")
    [check] = duet_gate.judge(typed(summary), 10, aa=False, baseline="the baseline run r5, accepted t").checks
    assert check.verdict == HOLDS


def test_a_testbed_bound_duet_cannot_tell():
    """Both builds at the testbed's ceiling: their ratio is near 1 whatever they do, so the pairs' HOLDS is not
    the build's."""
    pairs = [{"pair": n, "a_slot": s, "b_slot": t, "a_rps": 3000.0, "b_rps": 3000.0 * r,
              "a_lowest_failure_rps": 3150.0, "b_lowest_failure_rps": 3150.0 * r, "ratio": r}
             for n, (s, t, r) in enumerate([("node1", "node2", 1.0), ("node2", "node1", 0.99),
                                            ("node1", "node2", 1.01), ("node2", "node1", 1.0)], start=1)]
    mark = {"rule": "unsaturated", "sentence": "A's 3000/s is this machine's ceiling, not the application's: …",
            "figures": {}, "remedy": "…"}
    summary = {"run_id": "r7", "status": "complete", "duet": {"pairs": pairs, "builds": [{"text": ""}, {"text": ""}]},
               "targets": {"A": {"capacity_rps": 3000.0, "status": "testbed-bound", "testbed_bound": mark},
                           "B": {"capacity_rps": 3000.0, "status": "found"}}}
    [check] = duet_gate.judge(typed(summary), 10, aa=False, baseline="the baseline run r5, accepted t").checks
    assert check.verdict == CANNOT_TELL
    assert check.message.startswith("testbed-bound: A's 3000/s is this machine's ceiling")
    assert "what its pairs said: B/A 1.000" in check.message
    del summary["targets"]["A"]["testbed_bound"]
    assert duet_gate.judge(typed(summary), 10, aa=False, baseline="t").checks[0].verdict == HOLDS


def test_a_kept_war_that_is_gone_is_said_before_anything_runs(tmp_path):
    mark = BaselineMark("r7", None, "t", "h", None, {"WAR": str(tmp_path / "builds" / "0123.war")})
    with pytest.raises(duet_baseline.BuildNotKept, match="the WAR kept for the baseline run r7 is gone"):
        duet_baseline.baseline_words(mark, {"variant": "v3"}, {**CLUSTER, "APP_WAR": str(a_war(tmp_path / "a.war"))})


def test_a_duet_gate_judges_the_blocks_and_holds_b_to_the_slo_at_a_common_rate():
    # Blocks present: they are what is judged, not the pairs (whose ratios here would hold).
    pairs = [{"pair": 1, "a_slot": "node1", "b_slot": "node2", "a_rps": 800.0, "b_rps": 800.0,
              "a_lowest_failure_rps": 840.0, "b_lowest_failure_rps": 840.0, "ratio": 1.0}]
    blocks = [{"block": n, "a_slot": a, "b_slot": b, "windows": [{"a_rps": 1000.0, "b_rps": r} for r in rates]}
              for n, (a, b, rates) in enumerate([("node1", "node2", (940, 945)), ("node2", "node1", (950, 948)),
                                                 ("node2", "node1", (944, 951)), ("node1", "node2", (946, 942))], 1)]
    common = {"pairs": [{"pair": n, "rate_rps": 640.0, "a_passed": True, "b_passed": False, "a_p99": 40.0,
                         "b_p99": 900.0} for n in (1, 2)], "share_pct": 80, "intervals": {}}
    summary = {"run_id": "r8", "status": "complete",
               "duet": {"pairs": pairs, "blocks": blocks, "common": common, "builds": [{"text": ""}, {"text": "x"}]}}
    capacity, slo = duet_gate.judge(typed(summary), 2.5, aa=False).checks
    assert capacity.verdict == "fell" and capacity.figures["figure"] == "blocks" and "over 4 blocks" in capacity.message
    assert slo.verdict == "above threshold" and "B failed the SLO at a common rate where A met it in 2 of 2" in slo.message
    # Kept its latency in one pair of two, or measured in one pair only: no such check (one step near the knee
    # is not a verdict).
    common["pairs"][0]["b_passed"] = True
    assert [c.name for c in duet_gate.judge(typed(summary), 2.5, aa=False).checks] == ["capacity B/A"]
    common["pairs"] = common["pairs"][1:]
    assert [c.name for c in duet_gate.judge(typed(summary), 2.5, aa=False).checks] == ["capacity B/A"]


def test_a_duet_that_lost_a_machine_cannot_tell_and_says_which():
    blocks = [{"block": n, "a_slot": a, "b_slot": b, "windows": [{"a_rps": 1000.0, "b_rps": r} for r in (900, 905)]}
              for n, (a, b) in enumerate([("node1", "node2"), ("node2", "node1")] * 2, 1)]
    lost = "node2's machine lab3 was lost at 14:02:11 (it ran node2; its engine did not answer)"
    summary = {"run_id": "r10", "status": "degraded", "events": [{"sentence": lost}],
               "duet": {"blocks": blocks, "builds": [{"text": ""}, {"text": "x"}]}}
    [check] = duet_gate.judge(typed(summary), 2.5, aa=False).checks
    assert check.verdict == CANNOT_TELL and check.message.startswith(f"the run is degraded: {lost} (what its blocks "
                                                                     "said: ")


def test_a_build_that_met_the_slo_at_no_rate_fell_where_a_had_a_capacity():
    pairs = [{"pair": n, "a_slot": s, "b_slot": t, "a_rps": 800.0, "b_rps": None, "a_lowest_failure_rps": 840.0,
              "b_lowest_failure_rps": 50.0, "ratio": None}
             for n, (s, t) in enumerate([("node1", "node2"), ("node2", "node1")], 1)]
    summary = {"run_id": "r9", "status": "complete", "duet": {"pairs": pairs, "builds": [{"text": ""}, {"text": ""}]}}
    [check] = duet_gate.judge(typed(summary), 10, aa=False).checks
    assert check.verdict == "fell" and check.message.startswith("B met the SLO at no rate in any of its 2 searches")


def test_an_aa_band_is_recorded_from_a_complete_run_only(tmp_path, monkeypatch):
    monkeypatch.setenv("RESULTS_DIR", str(tmp_path))
    blocks = [{"block": n, "a_slot": a, "b_slot": b, "windows": [{"a_rps": 1000.0, "b_rps": r}]}
              for n, (a, b, r) in enumerate([("node1", "node2", 1001), ("node2", "node1", 996),
                                             ("node1", "node2", 1003), ("node2", "node1", 999)], 1)]
    summary = {"run_id": "r10", "status": "partial", "duet": {"pairs": [], "blocks": blocks,
                                                              "builds": [{"text": ""}, {"text": ""}]}}
    check = duet_gate.judge(typed(summary), 10, aa=True).checks[0]
    duet_gate.record_band(check, typed(summary))
    assert not (tmp_path / "aa-band.json").exists()
    duet_gate.record_band(check, typed({**summary, "status": "complete"}))
    band = json.loads((tmp_path / "aa-band.json").read_text())
    assert band["run_id"] == "r10" and band["figure"] == "blocks" and band["blocks"] == 4
    assert band["band_pct"] == check.figures["aa_band_pct"] > 0
