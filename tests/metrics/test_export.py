"""The per-step export: pmrep (in the controller image) over a small archive recorded by our own bench run
(tests/metrics/data/README.md says how it was made), compared with golden CSVs and figures, time masked; and
the parsing and derivation rules on hand-made series."""
from __future__ import annotations

import csv
import json
import os
from pathlib import Path

import pytest

from capbench.metrics import export, pmrep
from capbench.metrics.catalogue import JAVA, MB, node_figures
from capbench.metrics.counts import RawRows, count_over, cross_check
from capbench.metrics.series import labels, process_name

DATA = Path(__file__).parent / "data"
EXPECTED = DATA / "expected"
STEPS = [json.loads(line) for line in (DATA / "steps.jsonl").read_text().splitlines()]
# UPDATE_GOLDEN=1 rewrites the expected files from this export (then review the diff before committing).
UPDATE = os.environ.get("UPDATE_GOLDEN") == "1"


def masked_csv(path: Path) -> list[list[str]]:
    """The CSV with its Time column masked: the archive's times are not what the test is about."""
    rows = list(csv.reader(path.open(newline="")))
    return [["<time>", *row[1:]] if i else row for i, row in enumerate(rows)]


@pytest.fixture(scope="module")
def exported(tmp_path_factory) -> tuple[Path, list[dict]]:
    out = tmp_path_factory.mktemp("export")
    records = export.export_run(DATA / "archive", out, STEPS, {"node1": 0.5})
    return out, records


@pytest.mark.docker  # pmrep in the controller image: on the cluster's worker (tests/conftest.py)
def test_every_step_and_host_is_exported_like_the_golden_files(exported):
    out, _ = exported
    produced = sorted(p.relative_to(out) for p in out.rglob("*.csv"))
    assert [str(p) for p in produced] == [f"step-00{n}/{h}.csv" for n in (7, 8)
                                          for h in ("lb-counts", "lb", "load", "node1-counts", "node1")]
    for relative in produced:
        golden = EXPECTED / relative
        if UPDATE:
            golden.parent.mkdir(parents=True, exist_ok=True)
            with golden.open("w", newline="") as f:
                csv.writer(f).writerows(masked_csv(out / relative))
        assert masked_csv(out / relative) == masked_csv(golden), relative


@pytest.mark.docker  # pmrep in the controller image: on the cluster's worker (tests/conftest.py)
def test_step_figures_match_the_golden_figures(exported):
    _, records = exported
    figures = json.loads(json.dumps({r["step"]: r["host_metrics"] for r in records}))  # keys as in the file
    golden = EXPECTED / "figures.json"
    if UPDATE:
        golden.write_text(json.dumps(figures, indent=1, sort_keys=True) + "\n")
    assert figures == json.loads(golden.read_text())


@pytest.mark.docker  # pmrep in the controller image: on the cluster's worker (tests/conftest.py)
def test_figures_are_what_the_bench_saw(exported):
    """Independent of the golden files: the recorded steps were node1 alone at 350/s (0.5 CPU quota)."""
    _, records = exported
    for record in records:
        node1 = record["host_metrics"]["node1"]
        assert 0 < node1["cpu_pct_of_quota"] <= 110
        assert node1["gc_per_s"] > 0 and node1["alloc_mb_per_s"] > 100
        assert 0 < node1["heap_floor_mb"] <= node1["heap_used_mb_mean"] <= node1["heap_used_mb_max"]
        check = record["host_metrics"]["requests_cross_check"]["node1"]
        assert abs(check["diff_pct"]) <= 2, check
        assert check["haproxy_rps"] == pytest.approx(record["achieved_rps"], rel=0.05)
        # The counts span the whole step: every response the generator got went through HAProxy.
        assert check["haproxy_responses"] == pytest.approx(record["responses"], rel=0.01)


@pytest.mark.docker  # pmrep in the controller image: on the cluster's worker (tests/conftest.py)
def test_a_steps_own_quota_is_what_its_nodes_cpu_is_counted_against(exported, tmp_path):
    """A duet's twin slot ran with another quota than the profile's: its step says so, and its CPU % follows."""
    _, records = exported
    [halved] = export.export_run(DATA / "archive", tmp_path, [{**STEPS[-1], "node_cpus": {"node1": 0.25}}],
                                 {"node1": 0.5})
    before = next(r for r in records if r["step"] == STEPS[-1]["step"])["host_metrics"]["node1"]
    assert halved["host_metrics"]["node1"]["cpu_quota"] == 0.25
    assert halved["host_metrics"]["node1"]["cpu_pct_of_quota"] == pytest.approx(2 * before["cpu_pct_of_quota"],
                                                                                rel=0.01)


def test_instance_labels_and_process_names():
    assert labels("3 code:5xx proxy:nodes server:node1") == {"code": "5xx", "proxy": "nodes",
                                                                     "server": "node1"}
    assert labels("0 pool:G1 Eden Space") == {"pool": "G1 Eden Space"}
    assert process_name("000007 /usr/bin/java") == "/usr/bin/java"
    assert JAVA.search("/usr/bin/java") and not JAVA.search("/usr/bin/javac")


def test_windows_cover_whole_seconds_inside_each_step_and_raw_samples_around_it():
    windows = pmrep.windows_for([{"step": 4, "start_epoch": 100.2, "end_epoch": 120.9},
                                  {"step": 5, "start_epoch": 130.5, "end_epoch": 131.9},
                                  {"step": 6, "start_epoch": 133.7, "end_epoch": 140.1}])
    # Step 5 is too short for a rate.
    assert windows == [pmrep.Window("step-004", 101, 120, 100.2, 120.9, 130.5),
                       pmrep.Window("step-006", 134, 140, 133.7, 140.1, None)]
    assert (windows[0].raw_from, windows[0].raw_to) == (97, 124)


GRIND = "openmetrics.jvm.tomcat_servlet_requestcount_total"
RESPONSES = "openmetrics.haproxy.haproxy_server_http_responses_total"
STEP = pmrep.Window("step-001", 11, 15, 10.5, 15.2, 16.8)


def test_counts_run_from_the_last_sample_before_the_step_to_the_first_settled_sample_after_it():
    # The step ran 10.5..15.2; rows 0.8-1.1 s apart carry the rate since the row before.
    rows = RawRows([8.3, 9.4, 10.4, 11.5, 12.4, 13.4, 14.5, 15.3, 16.4],
                          {(GRIND, "2 servlet:grind"): [None, 0.0, 0.0, 20.0, 20.0, 20.0, 20.0, 10.0, 5.0],
                           (GRIND, "1 servlet:health"): [None, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0]})
    grind = lambda i: labels(i).get("servlet") == "grind"  # noqa: E731
    in_step = 20 * 1.1 + 20 * 0.9 + 20 * 1.0 + 20 * 1.1 + 10 * 0.8  # from 10.4 to 15.3
    # 15.3 is too soon after the end (15.2 + 0.25): the count runs to 16.4, the first settled sample before
    # the next step (16.8), and so includes the responses still in flight at the end.
    assert count_over(rows, GRIND, grind, STEP) == pytest.approx(in_step + 5 * 1.1)
    # If the next step started before that sample, the first sample after the end closes the count.
    early_next = pmrep.Window("step-001", 11, 15, 10.5, 15.2, 16.0)
    assert count_over(rows, GRIND, grind, early_next) == pytest.approx(in_step)
    # A gap in the rows inside the span: unknown, not a smaller count.
    gap = RawRows(rows.epochs, {(GRIND, "2 servlet:grind"): [None, 0.0, 0.0, None, 20.0, 20.0, 20.0, 10.0,
                                                                    5.0]})
    assert count_over(gap, GRIND, grind, STEP) is None
    # No sample before the step: unknown.
    late = RawRows(rows.epochs[3:], {k: v[3:] for k, v in rows.series.items()})
    assert count_over(late, GRIND, grind, STEP) is None


def test_node_figures_from_hand_made_rows():
    java, pmcd = "000007 /usr/bin/java", "000040 /usr/lib/pcp/bin/pmcd"
    series = {
        ("hotproc.psinfo.utime", java): [None, 200.0, 300.0],       # ms per second
        ("hotproc.psinfo.stime", java): [None, 50.0, 50.0],
        ("hotproc.psinfo.utime", pmcd): [None, 5.0, 5.0],
        ("openmetrics.jvm.jvm_gc_collection_seconds_sum", "0 gc:Copy"): [None, 0.02, 0.04],
        ("openmetrics.jvm.jvm_memory_pool_allocated_bytes_total", "4 pool:Eden Space"): [None, 2 * MB,
                                                                                         4 * MB],
        ("openmetrics.jvm.jvm_memory_pool_allocated_bytes_total", "7 pool:Tenured Gen"): [None, 9e9, 9e9],
        ("openmetrics.jvm.tomcat_servlet_requestcount_total", "2 servlet:grind"): [None, 100.0, 300.0],
        ("openmetrics.jvm.tomcat_servlet_processingtime_total", "2 servlet:grind"): [None, 100.0, 300.0],
        ("openmetrics.jvm.tomcat_servlet_requestcount_total", "1 servlet:health"): [None, 2.0, 2.0],
    }
    f = node_figures(series, cpu_quota=0.5)
    assert f["cpu_pct_of_quota"] == 60.0          # (250 + 350) / 2 ms/s = 0.3 cores of 0.5
    assert f["monitoring_cpu_pct_of_quota"] == 1.0
    assert f["gc_time_pct"] == 3.0
    assert f["alloc_mb_per_s"] == 3.0             # the young generation only: promotion is not allocation
    assert f["grind_requests_per_s"] == 200.0 and f["grind_ms_per_request"] == 1.0
    assert f["busy_threads_mean"] is None         # absent from the rows: unknown, not zero


def test_cross_check_compares_tomcat_with_haproxy_counts_per_node():
    nodes = {"node1": {"grind_requests_per_s": 99.0}, "node2": {"grind_requests_per_s": 0.0}}
    lb = {"servers": {"node1": {"responses_per_s": 100.0}, "node2": {"responses_per_s": 0.0}}}
    # Each host's own sample times (the loggers are not in step with each other); rates over 1 s rows.
    counts = {"node1": RawRows([9.9, 10.1, 11.1, 12.1, 13.1, 14.1, 15.1, 16.1],
                                      {(GRIND, "2 servlet:grind"): [None, 0.0, 250.0, 250.0, 245.0, 245.0, 0.0, 0.0],
                                       (GRIND, "1 servlet:health"): [None, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0]}),
              "node2": RawRows([10.0, 11.0], {(GRIND, "2 servlet:grind"): [None, 0.0]}),
              "lb": RawRows([9.6, 10.4, 11.4, 12.4, 13.4, 14.4, 15.4, 16.4],
                                   {(RESPONSES, "3 code:2xx proxy:nodes server:node1"):
                                    [None, 0.0, 300.0, 250.0, 250.0, 200.0, 0.0, 0.0],
                                    (RESPONSES, "12 code:5xx proxy:nodes server:node1"):
                                    [None, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0],
                                    (RESPONSES, "4 code:2xx proxy:nodes server:node2"):
                                    [None, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0]})}
    step = pmrep.Window("step-001", 11, 15, 10.3, 14.9, 18.0)
    checks = cross_check(nodes, lb, counts, step)
    assert checks["node1"]["tomcat_requests"] == 990 and checks["node1"]["haproxy_responses"] == 1000
    assert checks["node1"]["diff_pct"] == -1.0 and checks["node1"]["tomcat_rps"] == 99.0
    assert "node2" not in checks                  # no sample of node2 after the step: no count to compare


def test_where_tls_was_passed_through_the_balancers_request_counts_are_not_given():
    """TLS=node: the balancer's HTTP backend answered only checks and probes; its per-node request figures and the
    cross-check against Tomcat's counts would read as the nodes' lost requests."""
    figures = {"node1": {"cpu_pct_of_quota": 80.0},
               "lb": {"haproxy_cpu_cores": 0.1, "servers": {"node1": {"responses_per_s": 0.7, "sessions_mean": 0.0}}},
               "requests_cross_check": {"node1": {"tomcat_requests": 3000, "haproxy_responses": 7}}}
    unread = export.unread_requests(figures)
    assert unread["requests_cross_check"] == {} and unread["node1"] == figures["node1"]
    assert unread["lb"]["servers"]["node1"] == {"responses_per_s": None, "responses_5xx_per_s": None,
                                                "sessions_mean": 0.0}
    assert unread["lb"]["haproxy_cpu_cores"] == 0.1
    assert figures["requests_cross_check"]  # the step's own figures are not changed in place
