"""report.html from a small results folder of ours (tests/report/data/README.md says which run), rendered
offline in headless Chromium: every figure present and drawn, the table, E, the hints; `make report`'s
refusals."""
from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from markupsafe import escape
from PIL import Image

from capbench.analysis import efficiency, usl_fit
from capbench.kinds import KINDS
from capbench.report import build
from capbench.report.__main__ import main as report_main
from capbench.rundata.summary import Summary

DATA = Path(__file__).parent / "data"
CLUSTER = KINDS["cluster"].shows.section  # the run's kind
RUN = next(p for p in DATA.iterdir() if p.is_dir())
FIGURES = {"capacity-node1.png", "capacity-node2.png", "capacity-node3.png", "capacity-cluster.png",
           "single-vs-cluster.png", "load-balance.png", "latency-spectrum.png", "usl.png"}
# matplotlib's default colours for node1 (tab:blue) and the cluster (tab:purple): only the figures draw them.
FIGURE_COLOURS = {(31, 119, 180), (148, 103, 189)}


@pytest.fixture(scope="module")
def report(tmp_path_factory) -> Path:
    run = tmp_path_factory.mktemp("results") / RUN.name
    shutil.copytree(RUN, run)
    return build.build(run, CLUSTER)


def test_every_figure_is_made_and_inlined(report):
    made = {p.name for p in (report.parent / "figures").glob("*.png")}
    assert made == FIGURES
    html = report.read_text()
    assert html.count('src="data:image/png;base64,') == len(FIGURES)
    assert not re.search(r'(src|href)="(https?:)?//', html), "the page must not load anything from a network"


def test_the_page_has_the_table_e_hints_and_profile(report):
    html = report.read_text()
    for target in ("node1", "node2", "node3", "cluster"):
        assert f"<td>{target}</td>" in html
    assert "E = X<sub>cluster</sub> / ΣX<sub>i</sub> = 0." in html
    assert "CPU saturated" in html and "cpu_pct_of_quota = " in html
    assert "too few points to fit the USL" in html  # a cluster run has N = 1 and 3 only: said, not fitted
    assert "Note on E" not in html  # E 0.875: no caveat
    assert "per calibrated core" not in html and "not recorded (a run from before calibration)" in html


def test_the_profile_shows_the_gc_each_jvm_actually_used(report):
    # The profile table's rows, not the whole page: the inlined figures' base64 holds "G1" or "Serial" by chance.
    profile = report.read_text().split("<th>GC set / in use</th>", 1)[1].split("</table>", 1)[0]
    rows = dict(re.findall(r"<tr><td>(node\d)</td>(.*?)</tr>", profile, re.S))
    run = json.loads((RUN / "run.json").read_text())
    assert set(rows) == set(run["nodes"])
    for node, info in run["nodes"].items():
        setting = run["cluster_settings"][f"{node.upper()}_GC"]
        assert f"<td>{setting} / {info['gc']}</td>" in rows[node], rows[node]


FLAT = [700.0 * (1 + 0.03 * (-1) ** i) for i in range(4)]  # σ driven to its bound
CALIBRATION = {"probe": "v1 level 13, idle", "ms_per_call": {"node1": 0.7, "node2": 0.72, "node3": 0.74},
               "load_ms": 3.0, "machine": "ci-box"}


@pytest.fixture(scope="module")
def calibrated_report(tmp_path_factory) -> Path:
    """The same run as if it had a calibration and a superlinear E (recorded before the caveat field was)."""
    run = tmp_path_factory.mktemp("calibrated") / RUN.name
    shutil.copytree(RUN, run)
    summary = json.loads((run / "summary.json").read_text())
    summary["calibration"] = CALIBRATION
    summary["cluster"]["efficiency"] = 1.125
    (run / "summary.json").write_text(json.dumps(summary))
    return build.build(run, CLUSTER)


def test_calibration_and_e_caveat_on_the_page(calibrated_report):
    html = calibrated_report.read_text()
    # node1: 650/s × 0.7 ms = 0.455 cores, 91 % of its 0.5-core quota; the cluster at the nodes' median 0.72 ms.
    assert '<td class="num">0.455 (91 % of 0.5)</td>' in html and '<td class="num">0.756 (63 % of 1.2)</td>' in html
    assert "ci-box: v1 level 13, idle" in html and "(median 0.720)" in html
    assert f"Note on E: {escape(efficiency.caveat(1.125))}." in html


def test_a_usl_sweeps_fit_at_its_bound_on_the_page(tmp_path):
    run = tmp_path / RUN.name
    shutil.copytree(RUN, run)
    summary = json.loads((run / "summary.json").read_text())
    points = [{"n": n, "throughput_rps": x, "mean_latency_ms": 1000 * n / x, "step": 0}
              for n, x in zip((1, 2, 4, 8), FLAT)]
    summary["usl"] = {"points": points, "fit": usl_fit.fit([p["n"] for p in points], FLAT).as_dict()}
    (run / "summary.json").write_text(json.dumps(summary))
    html = build.build(run, KINDS["usl"].shows.section).read_text()
    assert "1.00000 (at bound)" in html and '"At bound"' in html


def test_calibrated_cores_are_left_out_for_a_workload_other_than_the_grinder(tmp_path):
    run = tmp_path / RUN.name
    shutil.copytree(RUN, run)
    summary = json.loads((run / "summary.json").read_text())
    (run / "summary.json").write_text(json.dumps({**summary, "calibration": CALIBRATION}))
    recorded = json.loads((run / "run.json").read_text())
    recorded["settings"] = {**recorded["settings"], "workload": "session", "session_kb": 16}
    (run / "run.json").write_text(json.dumps(recorded))
    html = build.build(run, CLUSTER).read_text()
    # The probe's Grinder call says nothing of what a /session request costs.
    assert "0.455 (91 % of 0.5)" not in html and "ci-box: v1 level 13, idle" in html


def test_a_sessions_run_shows_capacity_and_heap_by_session_size(tmp_path):
    run = tmp_path / RUN.name
    shutil.copytree(RUN, run)
    summary = json.loads((run / "summary.json").read_text())
    sizes = {"0": {"kb": 0, "users_heap_mb": 0.0, "capacity_rps": 8000.0, "heap_used_mb_max": 126.3,
                   "heap_used_pct_max": 40.8, "gc_time_pct_max": 0.55, "sessions_max": 10000.0, "collapsed": False,
                   "why": None},
             "128": {"kb": 128, "users_heap_mb": 1250.0, "capacity_rps": None, "heap_used_mb_max": 236.0,
                     "heap_used_pct_max": 76.3, "gc_time_pct_max": 7.7, "sessions_max": 1755.0, "collapsed": True,
                     "why": "node1 went down during step 18"}}
    summary["sessions"] = {"heap_max_mb": 309.4, "users": 10000, "sizes": sizes}
    (run / "summary.json").write_text(json.dumps(summary))
    html = build.build(run, KINDS["sessions"].shows.section).read_text()
    assert "node1 by the size of its users' sessions (10000 users; heap 309.4 MB)" in html
    assert ('<td class="num">128</td><td class="num">1250.0</td><td class="num">none</td><td class="num">236.0</td>'
            '<td class="num">76.3</td>') in html
    assert '<span class="status-partial">collapsed</span>: node1 went down during step 18' in html


def test_the_usl_section_is_for_kinds_that_measure_by_n(tmp_path):
    run = tmp_path / RUN.name
    shutil.copytree(RUN, run)
    assert 'id="usl"' in build.build(run, CLUSTER).read_text()  # node1 alone and the cluster: N = 1 and 3
    assert 'id="usl"' not in build.build(run, KINDS["single"].shows.section).read_text()


def test_a_failed_fit_is_said_as_failed():
    section = build.usl_section(Summary.from_json({
        "run_id": "r", "kind": "usl", "status": "complete", "targets": {},
        "usl": {"points": [{"n": 1, "throughput_rps": 5.0}],
                "fit": {"error": "the least-squares fit failed (RuntimeError: x)", "failed": True}}}),
        KINDS["usl"].shows.section)
    assert section["failed"] and section["fit"] is None and "RuntimeError" in section["error"]


def test_it_renders_offline_in_headless_chromium(report, tmp_path):
    shot = tmp_path / "report.png"
    done = subprocess.run(["chromium", "--headless", "--no-sandbox", "--disable-gpu",
                           "--disable-background-networking", "--window-size=1200,9000",
                           f"--screenshot={shot}", report.as_uri()], capture_output=True, timeout=120)
    assert done.returncode == 0 and shot.is_file(), done.stderr.decode()[-500:]
    image = Image.open(shot).convert("RGB")
    colours = {colour for _, colour in image.getcolors(maxcolors=1 << 20)}
    assert FIGURE_COLOURS <= colours, "the figures were not drawn"
    # Below the text: most of the page is figures, not blank space or broken-image icons.
    non_white = sum(count for count, colour in image.getcolors(maxcolors=1 << 20) if colour != (255, 255, 255))
    assert non_white > 0.05 * image.width * image.height


def test_make_report_refuses_what_is_not_a_run(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("RESULTS_DIR", str(tmp_path))
    assert report_main(["build", "nosuchrun"]) == 2
    assert "matches 0 folders" in capsys.readouterr().err
    (tmp_path / "20260101T000000Z-abc-single").mkdir()
    assert report_main(["build", "20260101T000000Z"]) == 2
    assert "missing run.json, summary.json, steps.jsonl" in capsys.readouterr().err


def summary_interval(ratio: float) -> dict:
    return {"ratio": ratio, "low": ratio * 0.9, "high": ratio * 1.1, "confidence": 0.9, "pairs": 6, "slot_effect": 1.0}


def test_a_duets_section_shows_its_pairs_what_the_same_instants_allowed_and_the_interval(tmp_path):
    run = tmp_path / RUN.name
    shutil.copytree(RUN, run)
    summary = json.loads((run / "summary.json").read_text())
    pair = {"pair": 1, "a_slot": "node1", "b_slot": "node2", "a_rps": 400.0, "b_rps": 600.0,
            "a_lowest_failure_rps": 440.0, "b_lowest_failure_rps": 660.0, "bracket_ratio": 1.5,
            "same_instant": {"low": None, "high": 1.12, "bounds": 3, "contradicted": 0}, "ratio": 1.12}
    summary["duet"] = {"builds": [{"text": ""}, {"text": "CPUS=0.43"}], "slots": ["node1", "node2"],
                       "pairs": [pair], "interval": {"ratio": 0.845, "low": 0.796, "high": 0.9056,
                                                     "confidence": 0.9, "pairs": 5, "slot_effect": 1.0042},
                       "common": {"share_pct": 80, "intervals": {"cpu": None, "p99": summary_interval(1.41)},
                                  "pairs": [{"pair": 1, "rate_rps": 320.0, "a_slot": "node1", "b_slot": "node2",
                                             "passed": True, "a_cpu": None, "b_cpu": None, "a_p99": 21.5,
                                             "b_p99": 30.3, "cpu_ratio": None, "p99_ratio": 1.4093}]},
                       "profile_difference": {
                           "rate_rps": 320.0, "a_slot": "node1", "b_slot": "node2", "per": 1000, "a_requests": 3200,
                           "b_requests": 3190, "a_samples": 150.0, "b_samples": 210.5, "a_samples_per_s": 48.0,
                           "b_samples_per_s": 67.1, "max_samples_per_s": 500, "min_samples": 3,
                           "grew": {"self": [{"name": "capbench.grinder.Grinder.reverse", "a": 3.0, "b": 41.2,
                                              "grew": 38.2, "a_at_most": True}], "total": [], "application": []}}}
    (run / "summary.json").write_text(json.dumps(summary))
    html = build.build(run, KINDS["duet"].shows.section).read_text()
    assert "What B spends more on than A (CPU samples, both at 320.0/s)" in html
    assert "A 150.0, B 210.5\n(3200 and 3190 requests)" in html and "these took 48.0 (A) and 67.1 (B)" in html
    summary["duet"]["profile_difference"].update(
        sampled_by={"by": "async-profiler", "event": "cpu", "interval_us": 1666}, unit="CPU ms")
    (run / "summary.json").write_text(json.dumps(summary))
    sampled = build.build(run, KINDS["duet"].shows.section).read_text()
    assert "What B spends more on than A (CPU ms, both at 320.0/s)" in sampled
    assert "async-profiler sampled both JVMs at least 1666 µs of\nCPU time apart (cpu)" in sampled
    assert "(48.0 samples a second on A, 67.1 on B)" in sampled and "5 threads a tick" not in sampled
    assert ('<td><code>capbench.grinder.Grinder.reverse</code></td><td class="num">≤3.0</td>\n'
            '<td class="num">41.2</td><td class="num">38.2</td>') in html and "none grew" in html
    assert "both slots offered 80 % of the lower capacity" in html and "<td>30.3</td>" in html
    assert "CPU per request B/A:\ntoo few pairs measured it" in html and "p99 B/A:\n<b>1.41</b>" in html
    assert "Duet: B against A, measured together" in html and "B = CPUS=0.43" in html
    assert "<td>1.5</td>" in html and "(0, 1.12):\n3 steps, 0 contradicted" in html and "<b>1.12</b>" in html
    assert "in\n[0.796, 0.9056] at\n90 % over 5 pairs" in html
    assert (run / "figures" / "duet.png").is_file()


def test_the_step_behind_a_median_no_step_ran_at_is_the_nearest_passed_rate():
    from dataclasses import replace

    from capbench.rundata.summary import TargetSummary
    from step_records import a_step
    records = [a_step(1, "node1", 747.0, True), a_step(2, "node2", 751.0, True), a_step(3, "node1", 780.0, False),
               a_step(4, "node2", 800.0, True, phase="evidence")]
    median = TargetSummary(capacity_rps=749.0)
    assert build.capacity_step(None, median, records).step == 1  # 747 and 751 as near: the lower
    assert build.capacity_step("node2", median, records).step == 2
    assert build.capacity_step(None, replace(median, capacity_rps=790.0), records).step == 2  # not the evidence step
    assert build.capacity_step(None, replace(median, capacity_rps=None), records) is None


def test_a_profiles_section_names_the_applications_methods_who_holds_what_and_the_servers_classes(tmp_path):
    # Trimmed from node1's profiles of a WORKLOAD=session bench (2000 users of 16 kB) and of Tomcat's examples
    # (2026-11-27).
    run = tmp_path / RUN.name
    shutil.copytree(RUN, run)
    buffers = "org.apache.tomcat.util.net.SocketBufferHandler <- org.apache.tomcat.util.net.NioEndpoint$NioSocketWrapper"
    tables = {"cpu_samples": 221, "seconds": 9.9, "old_objects": 196,
              "cpu_application": [{"name": "SessionExample.doGet", "count": 51, "total": 51.0}],  # the examples'
              "cpu_own": [{"name": "SessionExample.doGet", "count": 51, "total": 51.0}],  # in WEB-INF/classes
              "held_by": [{"name": buffers, "count": 176, "total": 176.0, "largest": 1.0,
                           "stack": ["byte[]", "java.nio.HeapByteBuffer.hb",
                                     "org.apache.tomcat.util.net.SocketBufferHandler.writeBuffer"]},
                          {"name": "(no path to a GC root: garbage not yet collected)", "count": 20, "total": 20.0,
                           "largest": 1.0, "stack": ["byte[]"]}]}
    node1 = {"recording": "step-016-node1.jfr", "flame_graphs": {}, "tables": tables,
             "heap_holders": [{"name": "byte[]", "instances": 60666, "bytes": 53443736}],
             "heap_classes_not_the_jdks": [{"name": "org.apache.catalina.session.StandardSession",
                                            "instances": 2000, "bytes": 176000}]}
    (run / "profiles.json").write_text(json.dumps({"node1": {
        "offered_rps": 7751.9, "seconds": 10, "problems": [], "nodes": {"node1": node1},
        "unprofiled": {"step": 15, "achieved_rps": 7750.5, "p99_ms": 164.4, "passed": True},
        "profiled": {"step": 16, "achieved_rps": 7740.0, "p99_ms": 201.0, "passed": True},
        "overhead": {"achieved_ratio": 0.999, "p99_ratio": 1.22, "pairs": 1}}}))
    html = build.build(run, CLUSTER).read_text()
    own = html.split("the application's methods", 1)[1].split("</table>", 1)[0]
    assert '<code>SessionExample.doGet</code></td><td class="num">51</td><td class="num">23.1</td>' in own
    own_code = html.split("the service's own methods", 1)[1].split("</table>", 1)[0]
    assert '<code>SessionExample.doGet</code></td><td class="num">51</td><td class="num">23.1</td>' in own_code
    held = html.split("live objects, held by", 1)[1].split("</table>", 1)[0]
    assert f'<code>{escape(buffers)}</code></td><td class="num">176</td><td class="num">90</td>' in held
    assert "byte[] ← java.nio.HeapByteBuffer.hb ← org.apache.tomcat.util.net.SocketBufferHandler.writeBuffer" in held
    assert "garbage not yet collected" in held
    servers = html.split("of which classes not the JDK's", 1)[1].split("</table>", 1)[0]
    assert ('<code>org.apache.catalina.session.StandardSession</code></td><td class="num">2000</td>'
            '<td class="num">0.17</td>') in servers


LAB3_LOST = {"what": "machine lost", "machine": "lab3", "roles": ["node2"], "hosts": ["node2"], "epoch": 1764424931.0,
             "seen": "HAProxy's health checks: still DOWN 30 s after step 9 failed; its engine "
                     "unix:///capbench/lab3/docker.sock did not answer (connection refused)"}


@pytest.mark.parametrize("how", ["interrupted", "node lost", "machine lost"])
def test_a_partial_run_or_a_lost_node_or_machine_shows_why_a_figure_is_missing_never_none(tmp_path, capsys, how):
    from capbench.analysis import history, not_measured
    from capbench.rundata import events
    from capbench.rundata.run import RunRecord
    run = tmp_path / RUN.name
    shutil.copytree(RUN, run)
    data = json.loads((run / "summary.json").read_text())
    if how == "interrupted":  # stopped by Ctrl-C after the nodes, before the cluster's search
        data.update(status="partial", error="interrupted")
        del data["targets"]["cluster"]
        expected = ["not measured: the run was interrupted before cluster&#39;s search"]
    elif how == "node lost":  # node2 down before its search, which was skipped: the run went on
        data["skipped"] = {"node2": "node2 down (HAProxy's health checks) for 30 s"}
        del data["targets"]["node2"]
        expected = ["not measured: node2&#39;s search was skipped (node2 down"]
    else:  # node2's machine lost during its search: the search ended, the cluster's was skipped
        data.update(status="degraded", events=[{**LAB3_LOST, "t_s": 95.0, "sentence": events.sentence(LAB3_LOST)}])
        data["targets"]["node2"].update(capacity_rps=None, repeats=[], min_rps=None, max_rps=None, status="none",
                                        metrics_at_capacity=None,
                                        searches=[{"status": "node-down", "capacity_rps": None,
                                                   "reason": "node2 went down (HAProxy's health checks)"}])
        data["skipped"] = {"cluster": "node2 down (HAProxy's health checks) for 30 s"}
        del data["targets"]["cluster"]
        lost = f"node2&#39;s machine lab3 was lost at {events.clock(LAB3_LOST['epoch'])}"
        expected = [f"not measured: {lost}", f'<p class="banner status-degraded">Degraded: {lost} (it ran node2; ']
    from capbench.kinds.cluster_findings import figure_labels
    sums = figure_labels()
    cluster = data["cluster"]
    for key, labels in sums.items():
        if any(not (data["targets"].get(label) or {}).get("capacity_rps") for label in labels):
            cluster[key] = None
    cluster["not_measured"] = {key: not_measured.why_missing(data, labels) for key, labels in sums.items()
                               if cluster[key] is None}
    (run / "summary.json").write_text(json.dumps(data))
    html = build.build(run, CLUSTER).read_text()
    assert "None" not in html
    for words in expected:
        assert words in html
    found = KINDS["cluster"].found_in(data)
    KINDS["cluster"].shows.console(data, found)
    line = history.history_line(RunRecord.read(run / "run.json"), Summary.from_json(data),
                                KINDS["cluster"].shows.history(found))
    said = capsys.readouterr().out + json.dumps(line.to_json())
    assert "None" not in said
    for words in expected:
        assert words.replace("&#39;", "'").split(" (it ran")[0].removeprefix('<p class="banner status-degraded">'
                                                                          "Degraded: ") in said


def test_a_sessions_run_on_a_scenario_names_it_and_says_a_capacity_its_heap_does_not_sustain(tmp_path):
    run = tmp_path / RUN.name
    shutil.copytree(RUN, run)
    summary = json.loads((run / "summary.json").read_text())
    label = "node1 shop.yaml"
    summary["sessions"] = {"heap_max_mb": 309.4, "users": 10000, "scenario": "shop.yaml", "sizes": {label: {
        "kb": None, "label": label, "users_heap_mb": None, "capacity_rps": 562.5, "heap_used_mb_max": 152.3,
        "heap_used_pct_max": 49.2, "gc_time_pct_max": 1.68, "sessions_max": 27248, "collapsed": False, "why": None}}}
    sentence = ("node1 shop.yaml's capacity is not sustained by memory: at it node1 starts 316 sessions/s, more "
                "than the 55.5 new users/s its heap sustains")
    summary["targets"] = {label: {"capacity_rps": 562.5, "status": "found",
                                  "memory_unsustained": {"sentence": sentence, "nodes": {}}}}
    (run / "summary.json").write_text(json.dumps(summary))
    html = build.build(run, KINDS["sessions"].shows.section).read_text()
    assert "node1 on the sessions of shop.yaml's users (heap 309.4 MB)" in html
    assert f'<td class="num">{label}</td><td class="num">-</td><td class="num">562.5</td>' in html
    escaped = sentence.replace("'", "&#39;")  # Jinja's autoescape
    assert f'<p class="hint">{escaped}.</p>' in html


def test_the_spectrum_comes_from_the_steps_histogram_log_where_the_run_kept_one(tmp_path):
    from capbench.load.drivers.latency import StepLatency, record_ms
    from capbench.rundata import hlog
    from capbench.rundata.layout import RunPaths
    from capbench.rundata.records import read_steps

    run = tmp_path / RUN.name
    shutil.copytree(RUN, run)
    step = read_steps(run / "steps.jsonl")[0]
    recorded = build.spectrum_of(step, run)  # no log: the spectrum the step recorded
    assert recorded == [(float(p), float(v)) for p, v in step.result.latency_spectrum_ms]
    book = StepLatency(10, 2)
    for i in range(10_000):  # 1..10 ms, one request every millisecond of the measured part
        book.add(2 + i * 0.0008, 1 + i * 0.0009)
    record_ms(book.ramp, 500.0)  # the ramp is no part of the spectrum
    hlog.write(RunPaths(run).hlog(step.step), step.result.start_epoch, book.intervals(), "test")
    spectrum = dict(build.spectrum_of(step, run))
    assert spectrum[100.0] == pytest.approx(10.0, rel=1e-3) and len(spectrum) > len(recorded)
    p99 = min(p for p in spectrum if p >= 99)
    assert spectrum[p99] == book.steady.get_value_at_percentile(p99) / 1000.0


def test_the_client_leg_at_each_capacity_is_said_under_the_table(tmp_path):
    run = tmp_path / RUN.name
    shutil.copytree(RUN, run)
    summary = json.loads((run / "summary.json").read_text())
    leg = {"protocol": "http/1.1", "tls": True, "connections": 414, "new_connections_per_s": 82.58,
           "tls_full_handshakes_per_s": 81.98, "tls_resumed": 0, "tls_handshakes": 411}
    summary["targets"]["node1"]["client_leg_at_capacity"] = leg
    (run / "summary.json").write_text(json.dumps(summary))
    html = build.build(run, CLUSTER).read_text()
    assert ("node1: the client's leg at capacity, as the balancer counted it: http/1.1 over TLS, 414 connections "
            "(82.58 new/s), 81.98 full handshakes/s (0 of 411 resumed).") in html
    assert html.count("the client's leg at capacity") == 1  # the targets without a leg recorded say nothing
