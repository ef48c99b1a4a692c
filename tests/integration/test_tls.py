"""TLS=lb for real on the integration tests' cluster: the balancer alone is re-created (the nodes keep running);
a load host reaches https://lb:8443 with the balancer's certificate verified against the checkout's authority,
and is refused without it; a self-check step goes through oha over TLS, verified; run.json records the
certificates' fingerprints and what the connection negotiated, as HAProxy itself reported it; each step the
client's leg as the balancer counted it, HTTP/1.1 and then HTTP/2 (HTTP=2) by ALPN on the same port."""
from __future__ import annotations

import json
import sys

import pytest

from capbench.load.tls_facts import fingerprint
from conftest import IT_ENV as ENV, PROJECT, ROOT, compose, it_up, only_run, run, steps_of

pytestmark = pytest.mark.usefixtures("cluster")  # the session's one cluster (tests/conftest.py)
NODES = [f"{PROJECT}-node{n}-1" for n in (1, 2, 3)]
AT_LB = {**ENV, "TLS": "lb"}


def container_ids() -> list[str]:
    return run(["docker", "inspect", "-f", "{{.Id}}", *NODES]).stdout.split()


def from_load(*curl: str, check: bool = True):
    return compose("exec", "-T", "load", "curl", "-sS", "--max-time", "5", *curl, env=AT_LB, check=check)


def test_tls_at_the_balancer_is_verified_and_recorded(tmp_path):
    it_up()
    nodes = container_ids()
    try:
        it_up(ENV, TLS="lb")
        assert container_ids() == nodes  # TLS=lb is the balancer's alone
        answer = from_load("--cacert", "/run/secrets/capbench_ca", "-o", "/dev/null", "-D", "-",
                           "https://lb:8443/info").stdout
        negotiated = next(line for line in answer.splitlines() if line.lower().startswith("x-capbench-tls:"))
        assert negotiated.split(":", 1)[1].split()[0] in ("TLSv1.2", "TLSv1.3"), negotiated
        # Without the authority the certificate is not trusted (curl's 60), and the clear port still answers.
        assert from_load("-o", "/dev/null", "https://lb:8443/info", check=False).returncode == 60
        assert from_load("-fo", "/dev/null", "http://lb:8080/info").returncode == 0

        done = run([sys.executable, "-m", "capbench.commands.bench", "selfcheck"],
                   env={**AT_LB, "RESULTS_DIR": str(tmp_path), "SELFCHECK_RATE": "300", "STEP_S": "3",
                        "LOADGEN": "oha", "MONITOR": "off"}, timeout=300)
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
        # The balancer's own count of the step's client leg: HTTP/1.1 over TLS, a full handshake per connection.
        leg = step["client_leg"]
        assert leg["protocol"] == "http/1.1" and leg["tls"] and leg["requests"] >= step["responses"], leg
        assert leg["h2_streams"] == 0 and leg["tls_handshakes"] - leg["tls_resumed"] >= step["connections"], leg

        # HTTP=2: h2 by ALPN on the same TLS port, each of oha's connections one stream at a time; the protocol is
        # read from the step record, as the balancer counted the generator's requests.
        h2 = run([sys.executable, "-m", "capbench.commands.bench", "selfcheck"],
                 env={**AT_LB, "RESULTS_DIR": str(tmp_path / "h2"), "SELFCHECK_RATE": "300", "STEP_S": "3",
                      "LOADGEN": "oha", "MONITOR": "off", "HTTP": "2"}, timeout=300)
        [step] = steps_of(only_run(tmp_path / "h2"))
        leg = step["client_leg"]
        assert step["passed"] and "--http2" in step["tool"]["argv"] and "generator keeps up" in h2.stdout
        assert leg["protocol"] == "h2" and leg["h2_streams"] >= step["responses"], leg
        assert leg["h2_connections"] == step["connections"] and leg["streams_per_h2_connection"] > 1, leg
    finally:
        it_up()
