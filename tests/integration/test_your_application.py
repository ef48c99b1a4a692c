"""A user's own application on the nodes (APP_WAR) and the user's own requests (SCENARIO_FILE): Debian's Tomcat
examples (static pages, servlets, JSPs, an HttpSession), a web application nobody on the team wrote, on the
second cluster. As packaged it admits loopback clients only, so its trial node answers 403 and the cluster is
left as it was; rebuilt without that valve (examples/apps/tomcat-examples.sh) it runs on every node, a client that
keeps its cookies stays with its session (LB_STICKY=cookie), the shared database is offered to it as a JNDI
DataSource, and a QUICK bench-sessions measures node1 on it with users who leave carts in their sessions: its
capacity, and how many sessions its heap holds. The file's name puts it last on its worker, so the cluster is
taken down with the application on it rather than brought back to the Grinder for nothing."""
from __future__ import annotations

import json
import re
import zipfile
from pathlib import Path

import pytest

from capbench.hosts.stack import duration_s
from conftest import ROOT, assert_capacity_from_the_steps, compose, only_run, run, steps_of

EXAMPLES = {"APP_CONTEXT": "examples", "APP_HEALTH": "/examples/index.html"}
SCENARIO = str(ROOT / "examples" / "scenarios" / "tomcat-examples-sessions.yaml")
LABEL = "node1 tomcat-examples-sessions.yaml"
NODES = ("node1", "node2", "node3")
JAR = "/tmp/capbench-it-cookies"  # in the load host


@pytest.fixture(scope="module")
def wars(tmp_path_factory):
    """The examples as Debian packages them, and without their loopback-only valve."""
    folder = tmp_path_factory.mktemp("apps")
    run(["bash", "examples/apps/tomcat-examples.sh", str(folder / "packaged.war"), "--keep-valve"], timeout=300)
    run(["bash", "examples/apps/tomcat-examples.sh", str(folder / "examples.war")], timeout=300)
    return folder


def node_containers(env: dict[str, str]) -> list[str]:
    return sorted(compose("ps", "-q", *NODES, env=env).stdout.split())


def test_an_application_that_refuses_the_balancer_is_refused_on_a_trial_node_and_the_cluster_kept(
        second_cluster, wars):
    before = node_containers(second_cluster)
    done = run(["make", "--no-print-directory", "up"], check=False, timeout=600,
               env={**second_cluster, **EXAMPLES, "APP_WAR": str(wars / "packaged.war")})
    assert done.returncode == 2, done.stdout + done.stderr
    assert "APP_HEALTH=/examples/index.html answered 403, not 200, on a trial node" in done.stderr, done.stderr
    assert "the cluster was not touched" in done.stderr
    assert node_containers(second_cluster) == before


SLOW_START_S = 70
SLOW_LISTENER = """package capbench.slow;

import java.nio.file.Files;
import java.nio.file.Path;

import jakarta.servlet.ServletContextEvent;
import jakarta.servlet.ServletContextListener;

/** Deploys slowly on a cluster's node (its hostname is nodeN), quickly on the trial node (a container id). */
public class SlowStart implements ServletContextListener {
    @Override
    public void contextInitialized(ServletContextEvent event) {
        try {
            if (Files.readString(Path.of("/etc/hostname")).trim().matches("node[0-9]+")) {
                Thread.sleep(%d * 1000L);
            }
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }
}
""" % SLOW_START_S
SLOW_WEB_XML = """<?xml version="1.0" encoding="UTF-8"?>
<web-app xmlns="https://jakarta.ee/xml/ns/jakartaee" version="6.0" metadata-complete="true">
  <listener><listener-class>capbench.slow.SlowStart</listener-class></listener>
</web-app>
"""


@pytest.fixture(scope="module")
def slow_war(tmp_path_factory):
    """A WAR whose deployment takes SLOW_START_S on every node of a cluster (a listener that sleeps), and none on
    the trial node: the nodes' own start windows, not the trial's, are what it tries."""
    folder = tmp_path_factory.mktemp("slow")
    api = sorted(Path.home().glob(".m2/repository/jakarta/servlet/jakarta.servlet-api/6.*/jakarta.servlet-api-*.jar"))
    assert api, "no Jakarta Servlet API in ~/.m2: the webapp's build (make test-unit) fetches it"
    source = folder / "src" / "capbench" / "slow" / "SlowStart.java"
    source.parent.mkdir(parents=True)
    source.write_text(SLOW_LISTENER)
    classes = folder / "war" / "WEB-INF" / "classes"
    run(["javac", "--release", "17", "-cp", str(api[-1]), "-d", str(classes), str(source)], timeout=120)
    (folder / "war" / "WEB-INF" / "web.xml").write_text(SLOW_WEB_XML)
    (folder / "war" / "index.html").write_text("<p>slow to start</p>\n")
    war = folder / "slow.war"
    with zipfile.ZipFile(war, "w") as archive:
        for path in sorted((folder / "war").rglob("*")):
            archive.write(path, path.relative_to(folder / "war").as_posix())
    return war


def test_a_nodes_start_window_reaches_its_health_check_and_a_window_run_out_says_what_was_waited(
        second_cluster, slow_war):
    """node1 alone re-created (NODES=1: the others keep running until the next test brings the cluster to its
    application), with 40 s for half a core: its trial node's window too (it answered in 19 s here). Docker holds
    the window as node1's start period, a deployment of the JVM's start and 70 s more outlasts it, Docker calls the
    node unhealthy three failed checks after it and make up says so then, with the seconds it waited. With the
    fixed start period of 180 s Docker had before, this bring-up would have passed. (Each quota's window:
    config/test_settings.py; an application that takes 250 s passing with APP_START_S=300: docs/findings.md.)"""
    slow = {**second_cluster, "APP_WAR": str(slow_war), "APP_CONTEXT": "slow", "APP_HEALTH": "/slow/index.html",
            "NODES": "1", "APP_START_S": "40"}
    short = run(["make", "--no-print-directory", "up"], check=False, timeout=600, env=slow)
    assert short.returncode == 2, short.stdout + short.stderr
    [node1] = compose("ps", "-q", "node1", env=second_cluster).stdout.split()
    period = run(["docker", "inspect", "--format", "{{.Config.Healthcheck.StartPeriod}}", node1]).stdout.strip()
    assert duration_s(period) == 40, period
    [line] = [x for x in short.stderr.splitlines() if x.startswith("capbench: not healthy after ")]
    waited = int(line.split("not healthy after ")[1].split(" s")[0])
    assert 40 <= waited < 180, line
    assert re.search(r"node1 \(its Tomcat was .* after \d+ s, its CPU quota 0\.5, its start window 40 s\)", line), line
    assert "APP_START_S (now 40 s for half a core)" in line, line
    # While it waited, it said every 20 s that node1 was still starting, and for how long.
    assert re.search(r"^capbench: still starting: node1 \(\d+ s waited, up to \d+ s\)$", short.stdout, re.M), short.stdout


def session_example(env: dict[str, str], query: str = "") -> str:
    """The examples' SessionExample page through the balancer, for a client that keeps its cookies (curl's jar
    in the load host), as a browser would."""
    return compose("exec", "-T", "load", "curl", "-fsS", "-b", JAR, "-c", JAR,
                   f"http://lb:8080/examples/servlets/servlet/SessionExample{query}", env=env).stdout


def session_id(page: str) -> str:
    [found] = re.findall(r"Session ID: (\S+)", page)
    return found


def test_quick_bench_sessions_measures_node1_and_its_heap_on_the_application_with_the_users_requests(
        second_cluster, wars, tmp_path):
    with_app = {**second_cluster, **EXAMPLES, "APP_WAR": str(wars / "examples.war"), "LB_STICKY": "cookie"}
    run(["make", "--no-print-directory", "up"], env=with_app, timeout=600)
    # LB_STICKY=cookie: the balancer learns the JSESSIONID the application set and sends the client that sends it
    # back to the node holding its session. Without it the weights (5:4:3, nothing else sending) would spread these
    # six requests over the nodes, and the value would be missing wherever the session is not.
    pages = [session_example(second_cluster, "?dataname=capbench&datavalue=kept")]
    pages += [session_example(second_cluster) for _ in range(5)]
    assert all("capbench = kept" in page for page in pages), pages[-1]
    assert len({session_id(page) for page in pages}) == 1
    table = run([str(ROOT / "cluster" / "lb-api.sh"), "show table nodes"], env=second_cluster).stdout
    assert f"key={session_id(pages[0])} " in table and "server_key=node" in table, table
    # Tomcat offers every context on the nodes the shared database as jdbc/capbench, the Grinder's beside the
    # application's: a connection borrowed from it answers.
    offered = compose("exec", "-T", "node1", "curl", "-sS", "http://127.0.0.1:8080/capbench/datasource",
                      env=second_cluster).stdout
    assert offered.startswith("{") and json.loads(offered)["offered"] is True, offered
    assert "PostgreSQL" in json.loads(offered)["database"], offered
    # bench-sessions with the scenario: node1 started afresh, searched on the examples' pages, half of the requests
    # a new user (oha keeps no cookies) leaving a 2-kB cart. Below node1's capacity (1087.5/s alone, 2026-11-28,
    # docs/findings.md). Steps of 4 s: the cross-check below counts from scrapes around the step, whose edges
    # weigh more in a shorter one.
    done = run(["make", "--no-print-directory", "bench-sessions", "QUICK=1"], timeout=1200,
               env={**with_app, "RESULTS_DIR": str(tmp_path), "LOADGEN": "oha", "SCENARIO_FILE": SCENARIO,
                    "START_RATE": "800", "QUICK_STEP_S": "4"})
    run_dir = only_run(tmp_path)
    summary = json.loads((run_dir / "summary.json").read_text())
    run_record = json.loads((run_dir / "run.json").read_text())
    steps = steps_of(run_dir)
    node1 = summary["targets"][LABEL]
    assert_capacity_from_the_steps(steps, LABEL, node1["capacity_rps"])
    # Every step sent the scenario's requests to the application, none the Grinder's.
    assert all(s["scenario_file"] == "tomcat-examples-sessions.yaml" and "/examples/" in s["url"] for s in steps)
    at_capacity = node1["metrics_at_capacity"]
    figures = at_capacity["node1"]
    [step] = [s for s in steps if s["step"] == at_capacity["step"]]
    # At the capacity, the application's servlets counted every response the client had (and the health checks,
    # about 3 a second), the Grinder's none. Counted from the samples around the step (capbench/metrics/counts.py): the
    # per-second mean (app_requests_per_s) is only a rough rate over a QUICK step's 4 s, whose first and last
    # seconds the scrapes of a saturated JVM straddle (CI saw 1218.76/s at 1400/s offered, 1388.75 achieved).
    check = at_capacity["requests_cross_check"]["node1"]
    assert check["tomcat_requests"] >= step["responses"] and figures["app_requests_per_s"] > 0, (check, step)
    assert not figures["grind_requests_per_s"], figures
    # Tomcat's count of the application's requests against HAProxy's responses from node1 over the step: the
    # same requests, give or take the health checks that only Tomcat counts.
    assert check["diff_pct"] is not None and 0 <= check["diff_pct"] < 2, check
    assert run_record["cluster_settings"]["APP_WAR"].endswith("examples.war")
    assert run_record["cluster_settings"]["GRINDER_PATH"] == "/capbench"
    assert run_record["settings"]["scenario_file"] == SCENARIO and run_record["settings"]["scenario_sha256"]
    # The calibration still ran the Grinder beside the application, and says what it does not price.
    assert all(ms for ms in run_record["calibration"]["ms_per_call"].values()), run_record["calibration"]
    assert "say nothing of what your requests cost" in done.stderr + done.stdout
    assert "say nothing of what a request of this run's workload" in (run_dir / "report.html").read_text()
    # The search started with no sessions (node1 afresh, its warm-up's ended: STATE_BETWEEN=expire), and the
    # application's own sessions were counted: what one costs (the 2-kB carts and the JSPs' empty sessions), the
    # examples' timeout of 30 minutes as Tomcat read it, and so the new users a second its heap sustains.
    [search] = node1["searches"]
    assert search["state_before"]["mode"] == "expire" and search["state_before"]["nodes"]["node1"]["active"] == 0
    # What one costs, from the live heap full collections left before and after the search (0 sessions, then
    # those the search left): the steps' heap floors were too noisy to fit in CI (3.87 ± 1.37 kB over 4-s steps).
    memory = summary["memory_capacity"]["node1"]
    assert memory["method"] == "collections" and memory["sessions"][0] == 0, memory
    assert search["state_after"]["nodes"]["node1"]["active"] == memory["sessions"][1] > 1000, search
    assert 0.5 <= memory["kb_per_session"] <= 5 and memory["timeout_s"] == 1800, memory
    assert figures["sessions_started_per_s"] > 0 and memory["new_users_per_s"] > 0, (figures, memory)
    # At its capacity node1 started a session a second for every other request, far more than the heap keeps
    # for 30 minutes: the capacity is not sustained by memory, and the run says so.
    short = node1["memory_unsustained"]["nodes"]["node1"]
    assert short["sessions_started_per_s"] == figures["sessions_started_per_s"] > memory["new_users_per_s"], short
    assert f"{LABEL}'s capacity is not sustained by memory" in done.stdout + done.stderr
