"""The run's calibration from the load host's probe output: the servlet's own times, the JIT's first calls left
out, a node that did not answer every call left without a figure, the load probe's median."""
from __future__ import annotations

import json
import subprocess

from capbench.engine import calibration_probe
from capbench.engine.calibration_probe import MEASURED_CALLS, PROBE_CALLS, parse_probe, probe_script


def answers(node: str, times: list[float]) -> list[str]:
    return [f"{node} " + json.dumps({"node": node, "grind_ms": t}) for t in times]


def test_the_median_of_the_last_calls_per_node_and_the_load_probe():
    warming = [5.0] * (PROBE_CALLS - MEASURED_CALLS)  # interpreted code: left out
    node1 = warming + [0.40] * (MEASURED_CALLS // 2) + [0.44] * (MEASURED_CALLS // 2)
    node2 = warming + [0.61] * MEASURED_CALLS
    text = "\n".join(answers("node1", node1) + answers("node2", node2) + ["load 250000", "load 240000",
                                                                          "load 900000"])
    per_node, load_ms = parse_probe(text, ("node1", "node2"))
    assert per_node == {"node1": 0.42, "node2": 0.61} and load_ms == 250.0


def test_a_node_that_missed_calls_has_no_figure():
    text = "\n".join(answers("node1", [0.4] * (PROBE_CALLS - 1)) + ["curl: (7) Failed to connect"])
    assert parse_probe(text, ("node1", "node3")) == ({"node1": None, "node3": None}, None)


def test_one_script_probes_every_node_over_one_curl_each():
    script = probe_script(("node1", "node2"))
    assert script.count("curl ") == 2 and script.count("http://node2:8080/grind?") == PROBE_CALLS
    assert script.count("echo load") == calibration_probe.LOAD_PROBE_RUNS


def test_the_node_probe_runs_in_bash_and_reports_its_cpu_time():
    """The probe's own script, run here for real: a CPU time per run, their median in ms."""
    done = subprocess.run(["bash", "-c", calibration_probe.NODE_PROBE], capture_output=True, text=True, check=True)
    assert len(done.stdout.splitlines()) == calibration_probe.NODE_PROBE_RUNS, done.stdout
    assert calibration_probe.parse_node_probe(done.stdout) > 0


def test_the_node_probe_median_and_a_probe_that_did_not_report_every_run():
    assert calibration_probe.parse_node_probe("0.060 0.010\n0.070 0.020\n0.050 0.010\n") == 70.0
    assert calibration_probe.parse_node_probe("0.060 0.010\nbash: sha256sum: command not found\n") is None
