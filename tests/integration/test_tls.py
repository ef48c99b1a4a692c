"""TLS for real on the integration tests' cluster. TLS=lb: the balancer alone is re-created (the nodes keep
running); a load host reaches https://lb:8443 with the balancer's certificate verified against the checkout's
authority, and is refused without it; a self-check step goes through oha over TLS, verified; run.json records the
certificates' fingerprints and what the connection negotiated, as HAProxy itself reported it; the step its
client's leg as the balancer counted it, a connection and a full handshake per request (CONNECTION_LIFE=
per-request). TLS=both: the nodes open their own TLS connector, which the balancer
re-encrypts to, each node's certificate verified for its name; a node's own connector shows the client the node's
certificate; two steps on node1 over HTTP/2 by ALPN, whose protocol is read from the step records and the node
leg's TLS from run.json; a self-check step through capload with a connection per user of 5 requests over
HTTP/2, its connections and handshakes as capload and the balancer count them. TLS=node: the balancer alone is re-created and passes the client's TLS through, so the
client is shown a node's own certificate, verified for the name it dialed; a step with a connection (a handshake
at node1) per request, the node the client saw recorded in run.json. Each with HTTP/2 to the nodes (NODE_HTTP=2),
as the balancer and the node each say and run.json records: h2c in clear text behind TLS=lb, h2 by ALPN over the
re-encrypted leg (both), and a client's own h2 by ALPN at the node's connector (node)."""
from __future__ import annotations

import json
import re
import sys

import pytest

from capbench.load.tls_facts import fingerprint
from conftest import IT_ENV as ENV, PROJECT, ROOT, compose, it_up, only_run, run, steps_of

pytestmark = pytest.mark.usefixtures("cluster")  # the session's one cluster (tests/conftest.py)
NODES = [f"{PROJECT}-node{n}-1" for n in (1, 2, 3)]
AT_LB = {**ENV, "TLS": "lb"}
H2_TO_NODES = {**ENV, "NODE_HTTP": "2"}  # the balancer speaks HTTP/2 to the nodes in every test of this file


def container_ids() -> list[str]:
    return run(["docker", "inspect", "-f", "{{.Id}}", *NODES]).stdout.split()


def from_load(*curl: str, check: bool = True):
    return compose("exec", "-T", "load", "curl", "-sS", "--max-time", "5", *curl, env=AT_LB, check=check)


def assert_handshakes_priced(tls: dict, hosts: tuple[str, ...]) -> None:
    """run.json's tls.handshake_cost: each of `hosts` priced from full handshakes that all completed verified."""
    cost = tls["handshake_cost"]
    assert set(cost) == set(hosts), cost
    for figures in cost.values():
        assert figures["handshakes"] > 0 and not figures["errors"] and figures["cpu_ms_per_handshake"] > 0, cost
        assert figures["protocol"] in ("TLSv1.2", "TLSv1.3") and figures["cipher"], cost


def test_tls_at_the_balancer_is_verified_and_recorded(tmp_path):
    it_up(H2_TO_NODES)
    nodes = container_ids()
    try:
        it_up(H2_TO_NODES, TLS="lb")
        assert container_ids() == nodes  # TLS=lb is the balancer's alone
        # From the balancer to a node, HTTP/2 in clear text (h2c), as both the balancer and the node say.
        answer, info = from_load("--cacert", "/run/secrets/capbench_ca", "-D", "-", "https://lb:8443/info"
                                 ).stdout.replace("\r\n", "\n").split("\n\n", 1)
        assert re.search(r"^x-capbench-node-http: 2$", answer, re.M | re.I), answer
        assert json.loads(info)["request_protocol"] == "HTTP/2.0" and json.loads(info)["request_secure"] is False
        answer = from_load("--cacert", "/run/secrets/capbench_ca", "-o", "/dev/null", "-D", "-",
                           "https://lb:8443/info").stdout
        negotiated = next(line for line in answer.splitlines() if line.lower().startswith("x-capbench-tls:"))
        assert negotiated.split(":", 1)[1].split()[0] in ("TLSv1.2", "TLSv1.3"), negotiated
        # Without the authority the certificate is not trusted (curl's 60), and the clear port still answers.
        assert from_load("-o", "/dev/null", "https://lb:8443/info", check=False).returncode == 60
        assert from_load("-fo", "/dev/null", "http://lb:8080/info").returncode == 0

        done = run([sys.executable, "-m", "capbench.commands.bench", "selfcheck"],
                   env={**AT_LB, "NODE_HTTP": "2", "RESULTS_DIR": str(tmp_path), "SELFCHECK_RATE": "300", "STEP_S": "3",
                        "LOADGEN": "oha", "MONITOR": "off", "CONNECTION_LIFE": "per-request"}, timeout=300)
        run_dir = only_run(tmp_path)
        tls = json.loads((run_dir / "run.json").read_text())["tls"]
        certificates = ROOT / ".capbench" / "tls"
        assert tls["terminates"] == "lb" and tls["url"] == "https://lb:8443"
        assert tls["certificates_sha256"] == {"ca": fingerprint(certificates / "ca.pem"),
                                              "lb": fingerprint(certificates / "lb.crt")}
        assert tls["negotiated"]["protocol"] in ("TLSv1.2", "TLSv1.3") and tls["negotiated"]["cipher"], tls
        assert "PRIVATE KEY" not in (run_dir / "run.json").read_text()
        [step] = steps_of(run_dir)
        assert step["url"] == "https://lb:8443/lb-health" and step["passed"], step
        argv = step["tool"]["argv"]
        assert argv[argv.index("--cacert") + 1] == "/run/secrets/capbench_ca", argv
        assert "generator keeps up" in done.stdout
        # The balancer's own count of the step's client leg: HTTP/1.1 over TLS, a connection and a full handshake
        # per request (CONNECTION_LIFE=per-request).
        assert "--disable-keepalive" in argv, argv
        leg = step["client_leg"]
        assert leg["protocol"] == "http/1.1" and leg["tls"] and leg["requests"] >= step["responses"], leg
        assert leg["h2_streams"] == 0 and leg["connections"] >= step["responses"], leg
        assert leg["tls_handshakes"] - leg["tls_resumed"] >= step["responses"], leg
        node_http = json.loads((run_dir / "run.json").read_text())["node_http"]
        assert node_http["balancer_spoke"] == "HTTP/2" and node_http["node_saw"] == "HTTP/2.0", node_http
    except BaseException:
        it_up()  # the cluster's other tests expect it as the defaults leave it
        raise


def test_tls_both_re_encrypts_to_each_nodes_own_connector_verified(tmp_path):
    # After the TLS=lb test (or whatever a failure of it left): the nodes as the defaults run them.
    nodes = container_ids()
    certificates = ROOT / ".capbench" / "tls"
    try:
        it_up(H2_TO_NODES, TLS="both")
        assert set(container_ids()).isdisjoint(nodes)  # the nodes open a connector: they are re-created
        # A node's own connector shows the client the node's certificate, verified for its name.
        shown = from_load("--cacert", "/run/secrets/capbench_ca", "-o", "/dev/null", "-w", "%{ssl_verify_result}",
                          "https://node1:8443/info").stdout
        assert shown == "0", shown
        # Another name for the same node is refused: the certificate is node1's alone (curl's 60).
        assert from_load("--cacert", "/run/secrets/capbench_ca", "-o", "/dev/null", "--connect-to",
                         "node2:8443:node1:8443", "https://node2:8443/info", check=False).returncode == 60

        # HTTP=2 by ALPN to the balancer, and by ALPN from it to node1 over TLS: two steps of a QUICK search.
        done = run([sys.executable, "-m", "capbench.commands.bench", "single"],
                   env={**AT_LB, "TLS": "both", "NODE_HTTP": "2", "RESULTS_DIR": str(tmp_path), "QUICK": "1", "QUICK_WARMUP_S": "0",
                        "QUICK_HOLD_S": "3", "START_RATE": "100", "MAX_STEPS": "2", "LOADGEN": "oha", "HTTP": "2",
                        "MONITOR": "off"}, timeout=600)
        run_dir = only_run(tmp_path)
        tls = json.loads((run_dir / "run.json").read_text())["tls"]
        assert tls["terminates"] == "both" and tls["url"] == "https://lb:8443"
        assert {name: tls["certificates_sha256"][name] for name in ("node1", "node2", "node3")} == {
            name: fingerprint(certificates / f"{name}.crt") for name in ("node1", "node2", "node3")}
        leg = tls["node_leg"]
        assert leg["node"] in ("node1", "node2", "node3") and leg["implementation"].startswith("JSSE"), leg
        assert leg["negotiated"]["protocol"] in ("TLSv1.2", "TLSv1.3") and leg["negotiated"]["cipher"], leg
        assert "PRIVATE KEY" not in (run_dir / "run.json").read_text()
        # What a new connection's full handshake cost each host that ended one of the run's: the balancer and the
        # node measured (capload -handshakes, verified).
        assert_handshakes_priced(tls, ("lb", "node1"))
        node_http = json.loads((run_dir / "run.json").read_text())["node_http"]
        assert (node_http["balancer_spoke"], node_http["node_saw"], node_http["node_secure"]) == ("HTTP/2", "HTTP/2.0", True)
        # From 30/s: a node paying a full handshake a request, cold, carried about 55/s in a test at 100/s.
        stepped = steps_of(run_dir)
        assert len(stepped) == 2, done.stdout  # searched, or a failed step rechecked: both measured the same way
        for step in stepped:
            client = step["client_leg"]
            assert step["valid"] and step["url"].startswith("https://lb:8443/grind"), step
            assert "--http2" in step["tool"]["argv"] and step["responses"] > 0, step
            assert client["protocol"] == "h2" and client["tls"] and client["h2_streams"] >= step["responses"], client
            assert client["h2_connections"] == step["connections"] and client["streams_per_h2_connection"] > 1, client
            assert client["node_leg"]["protocol"] == "h2" and client["node_leg"]["requests"] >= step["responses"], client

        # The same over capload with a connection per user: each user's 5 requests on one h2 connection, verified,
        # a full handshake each, as capload and the balancer both count them.
        run([sys.executable, "-m", "capbench.commands.bench", "selfcheck"],
            env={**AT_LB, "TLS": "both", "NODE_HTTP": "2", "RESULTS_DIR": str(tmp_path / "per-user"),
                 "SELFCHECK_RATE": "200", "STEP_S": "3", "LOADGEN": "auto", "HTTP": "2", "MONITOR": "off",
                 "CONNECTION_LIFE": "per-user", "SESSION_REQUESTS": "5"}, timeout=300)
        [step] = steps_of(only_run(tmp_path / "per-user"))
        argv, client = step["tool"]["argv"], step["client_leg"]
        assert step["tool"]["name"] == "capload" and argv[argv.index("-life") + 1] == "per-user", argv
        assert argv[argv.index("-cacert") + 1] == "/run/secrets/capbench_ca", argv
        opened = int(re.search(r"capload opened (\d+) connections \((\d+) TLS handshakes\)", " ".join(step["notes"])
                               ).group(1))
        users = step["responses"] / 5
        assert step["passed"] and users <= opened <= users + step["connections"] + 1, (opened, step)
        assert client["protocol"] == "h2" and abs(client["h2_connections"] - opened) <= 2, (opened, client)
        assert client["tls_handshakes"] - client["tls_resumed"] >= users, client
    except BaseException:
        it_up()
        raise
    # Passed, the cluster stays at TLS=both for the TLS=node test below; this file runs just before the JAR's test,
    # which brings the nodes and the balancer to its own settings (tests/conftest.py's RUN_LAST).



def test_tls_node_passes_the_clients_tls_through_to_a_nodes_own_connector(tmp_path):
    # After the TLS=both test, whose nodes already open their TLS connector: the balancer alone is re-created.
    try:
        it_up(H2_TO_NODES, TLS="node")
        # Through the balancer the client is shown a node's own certificate, verified for the name it dialed (lb);
        # its common name says which node. The balancer ends no TLS: a node answers, not HAProxy.
        shown = from_load("--cacert", "/run/secrets/capbench_ca", "-o", "/dev/null", "-w",
                          "%{ssl_verify_result}\n%{certs}", "https://lb:8443/info").stdout
        assert shown.startswith("0\n") and re.search(r"^Subject:O = capbench, CN = node[123]$", shown, re.M), shown
        # A client offering HTTP/2 by ALPN gets it from the node's own connector (NODE_HTTP=2).
        info = json.loads(from_load("--cacert", "/run/secrets/capbench_ca", "--http2", "https://lb:8443/info").stdout)
        assert info["request_protocol"] == "HTTP/2.0" and info["request_secure"] is True, info
        assert from_load("-o", "/dev/null", "https://lb:8443/info", check=False).returncode == 60

        done = run([sys.executable, "-m", "capbench.commands.bench", "single"],
                   env={**AT_LB, "TLS": "node", "NODE_HTTP": "2", "RESULTS_DIR": str(tmp_path), "QUICK": "1", "QUICK_WARMUP_S": "0",
                        "QUICK_HOLD_S": "3", "START_RATE": "30", "MAX_STEPS": "2", "LOADGEN": "oha",
                        "CONNECTION_LIFE": "per-request", "MONITOR": "off"}, timeout=600)
        run_dir = only_run(tmp_path)
        tls = json.loads((run_dir / "run.json").read_text())["tls"]
        assert tls["terminates"] == "node" and tls["url"] == "https://lb:8443"
        assert tls["node_leg"]["node"] in ("node1", "node2", "node3"), tls
        assert tls["negotiated"]["protocol"] in ("TLSv1.2", "TLSv1.3") and tls["negotiated"] == tls["node_leg"]["negotiated"]
        assert "not checked with TLS=node" in done.stdout  # the balancer cannot answer the direct check itself
        assert_handshakes_priced(tls, ("node1",))  # the balancer passes TLS through: it ends none
        node_http = json.loads((run_dir / "run.json").read_text())["node_http"]
        assert node_http["balancer_spoke"] is None and node_http["node_saw"] == "HTTP/2.0", node_http
        # From 30/s: a node paying a full handshake a request, cold, carried about 55/s in a test at 100/s.
        stepped = steps_of(run_dir)
        assert len(stepped) == 2, done.stdout  # searched, or a failed step rechecked: both measured the same way
        for step in stepped:
            assert step["valid"] and step["responses"] > 0 and "--disable-keepalive" in step["tool"]["argv"], step
            # The balancer counted connections alone, one per request, and left the handshakes to the node.
            leg = step["client_leg"]
            assert leg["tls_ended_at"] == "nodes" and leg["requests"] is None and leg["tls_handshakes"] is None, leg
            assert leg["connections"] >= step["responses"], leg
    except BaseException:
        it_up()
        raise
    # Passed, the cluster stays at TLS=node: the JAR's test that follows brings it to its own settings.
