"""The shared database on the real cluster (the session's shared one, tests/conftest.py): healthy with the rest;
/query answered by every node through its own pool and through the balancer; the database reachable from the
nodes alone (PostgreSQL listens on the data network only); its password in no process's command line or environment and in no container's
configuration. Then a pool too small for the concurrency (seeds 003 and 004): the node's request threads wait in
the pool's borrow (its thread dumps, read by load/threaddump.py) and requests that wait past DB_POOL_TIMEOUT_MS
are answered 503, naming the pool."""
from __future__ import annotations

import json
import os
import subprocess
import time

import pytest

from conftest import IT_ENV as ENV, ROOT, compose, it_up, run
from load import threaddump

pytestmark = pytest.mark.usefixtures("cluster")
NODES = ("node1", "node2", "node3")
OTHERS = ("lb", "load", "controller")


def exec_in(host: str, *command: str, check: bool = True) -> subprocess.CompletedProcess:
    return compose("exec", "-T", host, *command, env=ENV, timeout=120, check=check)


def query(host: str, url: str) -> dict:
    return json.loads(exec_in(host, "curl", "-fsS", "--max-time", "10", url).stdout)


def test_the_database_is_healthy_serves_every_node_and_only_the_nodes():
    [db] = [json.loads(line) for line in compose("ps", "--format", "json", "db", env=ENV).stdout.splitlines()]
    assert db["Health"] == "healthy", db
    for node in NODES:
        said = query(node, "http://127.0.0.1:8080/query?rows=5&join=1&write=100&user=it-user")
        assert (said["node"], said["rows"], said["writes"], said["scope"]) == (node, 5, 1, "call"), said
    through_lb = query("load", "http://lb:8080/query?rows=3&calls=2")
    assert through_lb["rows"] == 6 and through_lb["node"] in NODES, through_lb

    networks = json.loads(run(["docker", "inspect", db["ID"]]).stdout)[0]["NetworkSettings"]["Networks"]
    address = networks[f"{ENV['COMPOSE_PROJECT_NAME']}_data"]["IPAddress"]
    assert address.startswith("10.90.1.")  # the IT bench network is 10.89.1: the data network beside it
    probe = "exec 3<>/dev/tcp/{}/5432"
    assert exec_in("node1", "timeout", "3", "bash", "-c", probe.format("database")).returncode == 0
    for host in OTHERS:
        # Not on the data network: no name "database", no route to its address, and the database host's
        # bench-network address (its pmcd's, which the controller logs) has no PostgreSQL.
        by_alias = exec_in(host, "getent", "hosts", "database", check=False)
        by_address = exec_in(host, "timeout", "3", "bash", "-c", probe.format(address), check=False)
        on_bench = exec_in(host, "timeout", "3", "bash", "-c", probe.format("db"), check=False)
        assert by_alias.returncode != 0 and by_address.returncode != 0 and on_bench.returncode != 0, host


def test_the_database_password_is_in_no_process_configuration_or_repository_file():
    password = (ROOT / ".capbench" / "secrets" / "db_password").read_text().strip()
    assert len(password) >= 16
    for host in (*NODES, *OTHERS, "db"):
        seen = exec_in(host, "sh", "-c", "cat /proc/[0-9]*/cmdline /proc/[0-9]*/environ 2>/dev/null || true").stdout
        assert password not in seen, host
    containers = compose("ps", "--quiet", env=ENV).stdout.split()
    assert password not in run(["docker", "inspect", *containers]).stdout
    assert run(["git", "grep", "--quiet", "--fixed-strings", password], check=False).returncode == 1


def test_a_pool_too_small_for_the_concurrency_holds_threads_in_its_borrow_and_refuses_naming_itself():
    """One connection per node, held by a request for 20 statements of 1000 joined rows, against 24 concurrent
    requests: the others queue in the pool, and those not served within 250 ms get the pool's 503."""
    it_up(DB_POOL_SIZE="1", DB_POOL_TIMEOUT_MS="250", DB_CONNECTION_SCOPE="request")
    try:
        url = "http://node1:8080/query?rows=1000&join=1&calls=20"
        burst = subprocess.Popen(
            [str(ROOT / "cluster" / "compose" / "compose.sh"), "exec", "-T", "load", "oha", "-z", "10s", "-c", "24",
             "--no-tui", "--output-format", "json", url],
            cwd=ROOT, env={**os.environ, **ENV}, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            text=True)
        time.sleep(3)
        dumps = run([str(ROOT / ".venv" / "bin" / "python"), "-c",
                     "from hosts import jvm\npid = jvm.java_pid('node1')\n"
                     "print('\\n\\x00\\n'.join(jvm.thread_dump('node1', pid) for _ in range(3)))"],
                    env=ENV, timeout=120).stdout.split("\n\x00\n")
        # Asked again and again beside the burst, until one is refused (most are, not every one).
        until_refused = (f'for i in $(seq 40); do out=$(curl -sS --max-time 10 -w "\\n%{{http_code}}" "{url}"); '
                         '[[ $out == *503 ]] && { echo "$out"; exit 0; }; done; exit 1')
        refused = exec_in("load", "bash", "-c", until_refused).stdout
        out, err = burst.communicate(timeout=120)
        assert burst.returncode == 0, err
    finally:
        it_up()
    summary = threaddump.summarize(dumps)
    assert summary["dumps"] == 3 and summary["mean_by_kind"]["pool"] >= 5, summary
    assert "waiting for a pooled connection" in threaddump.describe(summary)
    body, status = refused.strip().rsplit("\n", 1)
    assert status == "503" and body.strip() == ("no database connection within 250 ms (DB_POOL_TIMEOUT_MS): all 1 of "
                                                "this node's pooled connections were in use (DB_POOL_SIZE=1)"), refused
    codes = json.loads(out)["statusCodeDistribution"]
    assert codes.get("503", 0) > 0 and codes.get("200", 0) > 0, codes
