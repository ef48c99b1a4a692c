"""make gate's verdict (capbench/analysis/gate_verdict.py) on history lines made the way a run makes them, its settings, and the
baselines kept in the history (capbench/analysis/baselines.py): holds, fell beyond the tolerance, cannot tell (too few
repeats, a search that did not end, another machine, another bench, no baseline), p99 thresholds."""
from __future__ import annotations

import re
from dataclasses import replace

import pytest

from capbench.analysis import baselines, gate_verdict
from capbench.rundata import jsonl
from capbench.rundata.history import HistoryLine, read_history
from history_records import bench_hash, build_of, config_hash, history_line
from step_records import a_step

CALIBRATION = {"ms_per_call": {"node1": 0.35}, "node_cpu_ms": {"node1": 80.0}, "load_ms": 210.0, "machine": "AMD EPYC × 2 on vm"}
RUN = {"kind": "single", "settings": {"variant": "v2", "level": 13, "repeats": 3, "precision_pct": 7.0},
       "driver": {"name": "oha"}, "profile": "small", "git_sha": "abc1234", "calibration": CALIBRATION,
       "cluster_settings": {"NODE1_CPUS": "0.5", "NODE1_HEAP": "320m", "TOMCAT_MAX_THREADS": "200"}}
SETTINGS = gate_verdict.GateSettings("single", None, 10.0, ())


def line(run_id: str, node1: list[float], run: dict = RUN, status: str = "complete", **extra) -> HistoryLine:
    caps = sorted(node1)
    summary = {"run_id": run_id, "kind": "single", "status": status, "driver": {"name": "oha"},
               "targets": {"node1": {"capacity_rps": caps[len(caps) // 2] if caps else None, "repeats": node1}}}
    return replace(history_line(run, summary), **extra)


def found(n: int, status: str = "found") -> list[dict]:
    return [{"repeat": i + 1, "status": status, "reason": "why"} for i in range(n)]


def verdict(base: dict | None, now: dict, searches=None, steps=(), settings=SETTINGS) -> gate_verdict.Gate:
    return gate_verdict.judge(now, {"node1": found(3) if searches is None else searches}, list(steps), base,
                      "named" if base else "no run of this bench has been accepted", settings)


def test_bench_hash_leaves_out_the_build_but_not_the_bench():
    threads = {**RUN, "cluster_settings": {**RUN["cluster_settings"], "TOMCAT_MAX_THREADS": "2"}}
    variant = {**RUN, "settings": {**RUN["settings"], "variant": "v1"}}
    heap = {**RUN, "cluster_settings": {**RUN["cluster_settings"], "NODE1_HEAP": "64m"}}
    for build in (threads, variant, heap):
        assert bench_hash(build) == bench_hash(RUN)
        assert config_hash(build) != config_hash(RUN)
    for bench in ({**RUN, "settings": {**RUN["settings"], "level": 14}}, {**RUN, "profile": "lab"},
                  {**RUN, "cluster_settings": {**RUN["cluster_settings"], "NODE1_CPUS": "0.4"}}):
        assert bench_hash(bench) != bench_hash(RUN)
    assert build_of(threads) == {"VARIANT": "v2", "NODE1_HEAP": "320m", "TOMCAT_MAX_THREADS": "2"}


def test_unchanged_holds_and_a_drop_beyond_the_tolerance_fell():
    base = line("base", [1000, 1050, 1100])
    same = verdict(base, line("now", [980, 1040, 1120]))
    assert same.verdict == gate_verdict.HOLDS and same.code == 0
    [check] = same.checks
    assert check.name == "capacity node1" and "not wholly below the tolerance of -10 %" in check.message
    slower = verdict(base, line("now", [500, 525, 550], run={**RUN, "settings": {**RUN["settings"], "variant": "v1"}}))
    assert slower.verdict == gate_verdict.FELL and slower.code == 3
    assert slower.checks[0].figures["interval_pct"][1] < -10
    assert "525/s now (3 repeats: 500, 525, 550) against 1050/s (3 repeats: 1000, 1050, 1100), -50.0 %" in slower.checks[0].message and "VARIANT v2 → v1" in slower.notes[0]


def test_a_drop_the_noise_cannot_rule_out_of_the_tolerance_holds():
    # Medians 8 % apart, repeats overlapping: the interval reaches above −10 %.
    assert verdict(line("base", [1000, 1050, 1100]), line("now", [900, 966, 1080])).verdict == gate_verdict.HOLDS
    # The same drop with the repeats tight and a tolerance of 2 %: wholly below it.
    tight = gate_verdict.GateSettings("single", None, 2.0, ())
    base, now = line("base", [1000, 1001, 1002], precision_pct=0.1), line("now", [900, 901, 902], precision_pct=0.1)
    assert verdict(base, now, settings=tight).verdict == gate_verdict.FELL


@pytest.mark.parametrize("case, expected", [
    ("one repeat", "1 in B: the noise between repeats needs 3 a side"),
    ("no baseline", "no run of this bench has been accepted"),
    ("another machine", "the machine differs from the baseline's (node CPU probe +100.0 %)"),
    ("another bench", "measured another bench"),
    ("a search invalid", "repeat 2: invalid (why)"),
    ("partial", "the run is partial, not complete"),
    ("a machine lost", "the run is degraded, not complete (node2's machine lab3 was lost at 14:02:11)"),
    ("testbed-bound now", "now, node1's 1040/s is this machine's ceiling"),
    ("testbed-bound baseline", "the baseline, node1's 1050/s is this machine's ceiling"),
    ("held short", "repeat 2: held-short (why)"),
])
def test_cannot_tell(case, expected):
    base, now, searches = line("base", [1000, 1050, 1100]), line("now", [980, 1040, 1120]), found(3)
    if case == "one repeat":
        now, searches = line("now", [1040]), found(1)
    elif case == "no baseline":
        base = None
    elif case == "another machine":
        now = line("now", [980, 1040, 1120], run={**RUN, "calibration": {**CALIBRATION, "node_cpu_ms": {"node1": 160.0}}})
    elif case == "another bench":
        now = line("now", [980, 1040, 1120], run={**RUN, "settings": {**RUN["settings"], "level": 14}})
    elif case == "a search invalid":
        now, searches = line("now", [980, 1120]), [*found(1), {"repeat": 2, "status": "invalid", "reason": "why"},
                                                   {"repeat": 3, "status": "found"}]
    elif case == "partial":
        now = line("now", [980, 1040, 1120], status="partial")
    elif case == "testbed-bound now":
        now = line("now", [980, 1040, 1120], testbed_bound={"node1": "node1's 1040/s is this machine's ceiling"})
    elif case == "testbed-bound baseline":
        base = line("base", [1000, 1050, 1100], testbed_bound={"node1": "node1's 1050/s is this machine's ceiling"})
    elif case == "held short":
        searches = [*found(1), {"repeat": 2, "status": "held-short", "reason": "why"}, *found(1)]
    else:  # node1's capacities measured, then node2's machine lost: never a clean run to judge
        now = line("now", [980, 1040, 1120], status="degraded", lost=["node2's machine lab3 was lost at 14:02:11"])
    result = verdict(base, now, searches)
    assert result.verdict == gate_verdict.CANNOT_TELL and result.code == 4, result
    assert expected in result.checks[0].message


def test_a_grinder_call_priced_otherwise_by_a_restarted_jvm_is_not_another_machine():
    # The Grinder's ms per call moves with the code each JVM compiled (+32 % in a CI run, capacities +1 %); the
    # nodes' CPU probe says the machine is the same.
    recompiled = {**RUN, "calibration": {**CALIBRATION, "ms_per_call": {"node1": 0.47}}}
    result = verdict(line("base", [1000, 1050, 1100]), line("now", [980, 1040, 1120], run=recompiled))
    assert result.verdict == gate_verdict.HOLDS, result


def test_a_load_host_calibrated_slower_is_noted_not_a_reason_to_doubt_the_nodes():
    slower_load = {**RUN, "calibration": {**CALIBRATION, "load_ms": 290.0}}
    result = verdict(line("base", [1000, 1050, 1100]), line("now", [980, 1040, 1120], run=slower_load))
    assert result.verdict == gate_verdict.HOLDS and "load host calibration +38.1 % since the baseline" in result.notes


def test_no_rate_passing_at_all_is_a_fall():
    now = line("now", [])
    result = verdict(line("base", [1000, 1050, 1100]), now, found(3, "none-passed"))
    assert result.verdict == gate_verdict.FELL and "no rate down to the lowest met the SLO" in result.checks[0].message


def slower_step(step):
    return replace(step, result=replace(step.result, latency_ms={"p99": 80.0}))


def test_p99_threshold_from_the_gate_steps():
    limit = gate_verdict.P99Threshold("node1", 50.0, 400.0)
    settings = gate_verdict.GateSettings("single", None, 10.0, (limit,))
    steps = [a_step(n, label=limit.label, latency_ms={"p99": p}, achieved_rps=400.0)
             for n, p in ((7, 20.0), (8, 60.0), (9, 30.0))]
    base, now = line("base", [1000, 1050, 1100]), line("now", [980, 1040, 1120])
    holding = verdict(base, now, steps=steps, settings=settings)
    assert [c.verdict for c in holding.checks] == [gate_verdict.HOLDS, gate_verdict.HOLDS]
    assert "p99 30.0 ms (median of 3 steps: 20.0, 60.0, 30.0 ms), threshold 50 ms" == holding.checks[1].message
    above = verdict(base, now, steps=[slower_step(s) for s in steps], settings=settings)
    assert above.verdict == gate_verdict.ABOVE and above.code == 5
    # A fall outweighs a threshold broken.
    slower = verdict(base, line("now", [500, 525, 550]), steps=[slower_step(s) for s in steps],
                     settings=settings)
    assert slower.code == 3
    invalid = verdict(base, now, steps=[replace(steps[0], valid=False, invalid_reason="load behind")],
                      settings=settings)
    assert invalid.checks[1].verdict == gate_verdict.CANNOT_TELL and "step 7: load behind" in invalid.checks[1].message


def test_baselines_are_marks_in_the_history_found_by_tag_id_or_bench_and_machine(tmp_path):
    elsewhere = {**RUN, "calibration": {**CALIBRATION, "machine": "other"}}
    lines = [line("r1-single", [1000, 1050, 1100]), line("r2-single", [990, 1000, 1010], run=elsewhere),
             line("r3-single", [1200]), line("r4-single", [1100, 1110, 1120], status="partial")]
    with pytest.raises(baselines.BaselineError, match="r3-single cannot be a baseline: too few repeats"):
        baselines.mark(lines, "r3", None)
    with pytest.raises(baselines.BaselineError, match="r4-single cannot be a baseline: it is partial"):
        baselines.mark(lines, "r4", None)
    for refused, why in ((line("r5-single", [1000, 1050, 1100], smoke=True), "it is a smoke run"),
                         (line("r6-single", [1000, 1050, 1100], testbed_bound={"node1": "at the ceiling"}),
                          "node1's capacity is the testbed's, not the build's (at the ceiling)"),
                         (line("r7-single", [1000, 1050, 1100], held_short={"node1": "held 0 s"}),
                          "node1's capacity was not held for its whole hold (held 0 s)")):
        with pytest.raises(baselines.BaselineError, match=re.escape(f"{refused.run_id} cannot be a baseline: {why}")):
            baselines.mark([*lines, refused], refused.run_id, None)
    with pytest.raises(baselines.BaselineError, match="TAG='no tags' is not allowed"):
        baselines.mark(lines, "r1", "no tags")
    lines.append(baselines.mark(lines, "r1", "release-1"))
    lines.append(baselines.mark(lines[:4], "r2", None))
    for written in lines:
        jsonl.append(tmp_path / "history.jsonl", written.to_json())
    runs, marks = read_history(tmp_path / "history.jsonl")
    assert runs == lines[:4]
    lines = runs, marks
    bench, here = bench_hash(RUN), CALIBRATION["machine"]
    assert baselines.find(*lines, None, bench, here).line.run_id == "r1-single"  # this machine's, not the last
    assert baselines.find(*lines, None, bench, "other").line.run_id == "r2-single"
    assert baselines.find(*lines, None, bench, "a third").line.run_id == "r2-single"
    assert baselines.find(*lines, "release-1", "", None).how.startswith("tag release-1, accepted ")
    assert baselines.find(*lines, "r3", "", None).line.run_id == "r3-single"  # a named run, accepted or not
    assert baselines.find(*lines, None, "another bench", here).line is None
    with pytest.raises(baselines.BaselineError, match="BASELINE='v9' is neither a baseline tag .tags: release-1."):
        baselines.find(*lines, "v9", bench, here)


def test_make_baseline_appends_a_mark_that_compare_passes_over(tmp_path, monkeypatch, capsys):
    from capbench.report.__main__ import main
    monkeypatch.setenv("RESULTS_DIR", str(tmp_path))
    for run_id, caps in (("r1-single", [1000, 1050, 1100]), ("r2-single", [990, 1000, 1010])):
        jsonl.append(tmp_path / "history.jsonl", line(run_id, caps).to_json())
    assert main(["baseline", "--tag", "release-1"]) == 0
    assert "baseline: r2-single (abc1234) accepted for its bench" in capsys.readouterr().out
    assert main(["baseline", "r9"]) == 2 and "'r9' matches 0 runs" in capsys.readouterr().err
    assert main(["compare"]) == 0 and "A r1-single (abc1234)  →  B r2-single" in capsys.readouterr().out
    [mark] = read_history(tmp_path / "history.jsonl")[1]
    assert (mark.run_id, mark.tag) == ("r2-single", "release-1")


def test_a_gate_let_through_while_it_cannot_tell_says_so_in_its_outputs():
    from capbench.analysis.gate_verdict import CANNOT_TELL, Check, Gate, let_through
    gate = Gate("run", None, "", 10, [Check("capacity B/A", CANNOT_TELL, "it spans 0.900", {})], [])
    let_through(gate, {})
    assert gate.notes == []
    let_through(gate, {"GATE_CANNOT_TELL": "pass"})
    assert gate.notes and "lets this build through (exit 0) though the gate cannot tell" in gate.notes[0]
