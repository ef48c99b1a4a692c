"""An executable JAR on every node in Tomcat's place (APP_JAR), on the first cluster: WireMock's standalone JAR from
Maven Central (an HTTP mock server on an embedded Jetty: a server nobody on the team wrote, and not Spring Boot).
A connector setting it cannot take is refused before anything starts; a JAR that exits at start is refused on a
trial node with its log lines and the cluster kept; started right, it serves on every node behind the balancer,
which names the node that answered, and a QUICK bench-single on its admin API's requests finds node1's capacity
without the Grinder: the nodes described by the metrics' agent, the calibration by its CPU probe alone. It runs
last but the teardown check on its worker (tests/conftest.py's RUN_LAST), so it leaves the JAR on the nodes rather
than bringing the Grinder back for nothing."""
from __future__ import annotations

import json

import pytest

from capbench.hosts.topology import NODES
from conftest import (
    IT_ENV as ENV,
    ROOT,
    assert_capacity_from_the_steps,
    compose,
    only_run,
    run,
    steps_of,
)

pytestmark = pytest.mark.usefixtures("cluster")  # the session's one cluster (tests/conftest.py)
SCENARIO = str(ROOT / "examples" / "scenarios" / "wiremock.yaml")
ARGS = "--port 8080 --disable-banner --no-request-journal"


@pytest.fixture(scope="module")
def wiremock(tmp_path_factory):
    """WireMock's settings as a user gives them: the JAR downloaded (its SHA-1 checked), its health path."""
    jar = tmp_path_factory.mktemp("apps") / "wiremock.jar"
    run(["bash", "examples/apps/wiremock.sh", str(jar)], timeout=300)
    return {"APP_JAR": str(jar), "APP_HEALTH": "/__admin/health", "APP_JAR_ARGS": ARGS}


def node_containers() -> list[str]:
    return sorted(compose("ps", "-q", *NODES, env=ENV).stdout.split())


def test_a_jar_is_refused_before_it_runs_where_it_cannot_and_runs_on_every_node_where_it_can(wiremock, tmp_path):
    up = ["make", "--no-print-directory", "up"]
    done = run(up, check=False, env={**ENV, **wiremock, "TOMCAT_MAX_THREADS": "50"})
    assert (done.returncode, done.stderr.strip().splitlines()[0]) == (2, (
        f"capbench: TOMCAT_MAX_THREADS=50 is not allowed with APP_JAR='{wiremock['APP_JAR']}': a JAR that is not "
        "Spring Boot's takes no connector settings from capbench: pass its server's own in APP_JAR_ARGS")), done.stderr

    before = node_containers()
    done = run(up, check=False, timeout=600, env={**ENV, **wiremock, "APP_JAR_ARGS": "--port 8080 --no-such-option"})
    assert done.returncode == 2, done.stdout + done.stderr
    assert f"APP_JAR='{wiremock['APP_JAR']}': the trial node stopped (exit 1) after" in done.stderr, done.stderr
    assert "---- the trial node's log" in done.stderr and "the cluster was not touched" in done.stderr
    assert node_containers() == before

    run(up, timeout=900, env={**ENV, **wiremock})
    answered = compose("exec", "-T", "load", "curl", "-fsS", "-D", "-", "-o", "/dev/null",
                       "http://lb:8080/__admin/mappings", env=ENV).stdout.lower()
    assert "x-capbench-node: node" in answered, answered
    # From 1000/s: node1 served WireMock's admin API at 4600/s here; the tests' 100/s would add three steps.
    run(["make", "--no-print-directory", "bench-single", "QUICK=1", f"SCENARIO_FILE={SCENARIO}", "START_RATE=1000"],
        env={**ENV, **wiremock, "RESULTS_DIR": str(tmp_path)}, timeout=1200)
    run_dir = only_run(tmp_path)
    summary = json.loads((run_dir / "summary.json").read_text())
    label = "node1"
    assert summary["status"] == "complete", summary.get("error")
    capacity = summary["targets"][label]["capacity_rps"]
    assert_capacity_from_the_steps(steps_of(run_dir), label, capacity)
    record = json.loads((run_dir / "run.json").read_text())
    node1 = record["nodes"]["node1"]
    assert node1["heap_max_bytes"] > 0 and node1["gc"] and node1["server"] == "an executable JAR (APP_JAR)", node1
    assert record["cluster_settings"]["APP_SHA256"] and record["cluster_settings"]["GRINDER_PATH"] == "none"
    calibration = summary["calibration"]
    assert set(calibration["ms_per_call"].values()) == {None} and all(calibration["node_cpu_ms"].values())
