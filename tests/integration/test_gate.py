"""make gate on the real cluster (the session's shared one), as a pipeline calls it (examples/ci/capacity-gate.sh): the
first gate of a bench has no baseline (cannot tell, 4) and its run is accepted with make baseline; a build known
to be slower fell (3), the target named. The outputs are read back with parsers we did not write: the JUnit file
against the common schema, the OpenMetrics text with prometheus_client's parser.

The verdict here compares runs measured minutes apart, so the test judges it at a tolerance far beyond the
machine's drift (GATE_DROP_PCT=50): our machines' speed moved capacities by up to 35 % within minutes (CI runs of
2026-11-23/25); the slower build (below) measured 0.21 of v3 (71.9 against 325-345/s) and 0.08 in CI
(2026-11-26: 40.6-46.1 against 386-537/s); it would "hold" only at 0.5 or more: ×2.4, 2.9 times the worst drift.
That the same build holds is not asserted here: between runs minutes apart the machine decides it (issue 36: a
comparison measured together). It is a claim for a quiet machine at the default 10 % (tests/claims/); the
verdict's rules, holds among them, are unit-tested on recorded history lines (tests/analysis/test_gate_verdict.py).
A third gate of the same build, at 50 %, took 4.6 minutes of CI's 46 (2026-11-26).
The p99 threshold is judged at 50/s, a quarter or less of node1's capacity on every machine we have (225-400/s),
not near v3's knee. The searches start at 100/s (a step saved of each of the six).

The slower build is a change of code and collector together: the Grinder's v1 (about 2.5 MB of garbage per call)
instead of v3 (buffers reused), on ZGC in a 96 MB heap instead of the JVM's choice in 320 MB: ZGC cannot keep up
with that garbage in so small a heap and stalls the allocating threads (closed loop, oha -c 16, node1: 50/s
against v3's 290-400/s; 21/s in 48 MB). Build settings all (analysis/history.py), none of them touching the
calibration the gate reads (the nodes' native CPU probe). No PCP figure is asserted: MONITOR=off. One repeat's
"cannot tell" is the verdict's own unit test (tests/analysis/test_gate_verdict.py); its exit path through the
script is the first gate's. A gate that could not tell because the machine's speed moved between the runs is
run once more (below)."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
import xmlschema
from prometheus_client.openmetrics.parser import text_string_to_metric_families

from conftest import IT_ENV as ENV, ROOT, assert_capacity_from_the_steps, run

pytestmark = pytest.mark.usefixtures("cluster")  # the session's one cluster (tests/conftest.py)
XSD = ROOT / ".capbench" / "tools" / "junit" / "junit-10.xsd"
TOLERANCE = {"GATE_DROP_PCT": "50"}  # beyond the machine's drift: the module's docstring


def gate(results: Path, *settings: str):
    """The gate as a pipeline calls it: the example script, which passes the gate's own exit status on (make
    turns every failure into 2)."""
    env = {**ENV, "RESULTS_DIR": str(results), "LOADGEN": "oha", "QUICK": "1", "GATE_BENCH": "single",
           "VARIANT": "v3", "MONITOR": "off", "START_RATE": "100", "QUICK_PRECISION_PCT": "15", **TOLERANCE}
    return run([str(ROOT / "examples" / "ci" / "capacity-gate.sh"), *settings], env=env, timeout=1800, check=False)


def gate_again_if_the_machine_moved(results: Path, *settings: str):
    """The gate, run once more when it could not tell because the machine's speed moved between the baseline and
    this run beyond the calibration's noise (analysis/calibration.py), as a pipeline on a shared machine would: the
    other worker's benches share our two cores."""
    done = gate(results, *settings)
    if done.returncode == 4 and any("the machine differs from the baseline's" in check["message"]
                                    for check in verdict_of(results)["checks"]):
        done = gate(results, *settings)
    return done


def verdict_of(results: Path) -> dict:
    return json.loads((results / "gate" / "gate.json").read_text())


def test_gate_accepts_a_baseline_and_catches_a_slower_build(tmp_path):
    first = gate(tmp_path, "GATE_P99_MS=500@50")
    assert first.returncode == 4, first.stdout + first.stderr
    said = verdict_of(tmp_path)
    [capacity, p99] = said["checks"]
    assert capacity["verdict"] == "cannot tell" and "no run of this bench has been accepted" in capacity["message"]
    assert len(capacity["repeats"]) == 3
    assert "GATE_CANNOT_TELL=pass would let it through" in first.stderr
    run_dir = tmp_path / said["run_id"]
    steps = [json.loads(line) for line in (run_dir / "steps.jsonl").read_text().splitlines()]
    searches = json.loads((run_dir / "summary.json").read_text())["targets"]["node1"]["searches"]
    assert sorted(s["capacity_rps"] for s in searches) == sorted(capacity["repeats"])
    for search in searches:
        assert_capacity_from_the_steps(steps, "node1", search["capacity_rps"], repeat=search["repeat"])
    # The threshold's rate measured once per repeat after the searches, far below the capacity: it holds.
    assert p99["name"] == "node1 p99 at 50/s" and p99["verdict"] == "holds", p99
    assert [s["offered_rps"] for s in steps if s["phase"] == "gate"] == [50.0] * 3
    xmlschema.XMLSchema(str(XSD)).validate(str(run_dir / "gate" / "junit.xml"))
    families = {f.name: f for f in text_string_to_metric_families((run_dir / "gate" / "metrics.om").read_text())}
    [node1] = families["capbench_capacity_requests_per_second"].samples
    assert node1.labels == {"target": "node1"} and node1.value == capacity["rps"]
    assert families["capbench_gate_exit_code"].samples[0].value == 4
    assert f"make baseline RUN={said['run_id']}" in first.stdout + first.stderr

    accepted = run(["make", "--no-print-directory", "baseline", "TAG=it-v3"], env={**ENV, "RESULTS_DIR": str(tmp_path)})
    assert f"baseline: {said['run_id']}" in accepted.stdout and "as it-v3" in accepted.stdout

    slower = gate_again_if_the_machine_moved(tmp_path, "VARIANT=v1", "NODE1_GC=zgc", "NODE1_HEAP=96m",
                                             "BASELINE=it-v3")
    assert slower.returncode == 3, slower.stdout + slower.stderr
    fell = verdict_of(tmp_path)
    assert fell["baseline"] == said["run_id"] and fell["baseline_how"].startswith("tag it-v3"), fell
    [check] = fell["checks"]
    assert check["name"] == "capacity node1" and check["verdict"] == "fell", check
    assert check["interval_pct"][1] < -50 and "gate: FELL (exit 3): capacity node1" in slower.stdout
    [changed] = [note for note in fell["notes"] if note.startswith("build settings changed since the baseline: ")]
    assert "NODE1_GC" in changed and "→ zgc" in changed and "→ 96m" in changed and "VARIANT v3 → v1" in changed

