"""The TLS handshake probe's plan and arithmetic (capbench/engine/handshake_probe.py): which hosts it prices for
each place TLS ends, the command it runs on the load host (the certificate verified, no key), and the CPU ms a
handshake from the process's CPU around the counted run."""
from __future__ import annotations

from capbench.engine import handshake_probe as probe


def test_the_hosts_that_end_tls_for_each_setting():
    nodes = ("node1", "node2")
    assert probe.terminators("off", nodes) == []
    assert [(t.host, t.url, t.process) for t in probe.terminators("lb", nodes)] == [
        ("lb", "https://lb:8443", "haproxy")]
    assert [t.host for t in probe.terminators("both", nodes)] == ["lb", "node1", "node2"]
    assert [(t.host, t.url, t.process) for t in probe.terminators("node", ("node1",))] == [
        ("node1", "https://node1:8443", "java")]


def test_the_probe_verifies_the_certificate_and_names_no_key():
    [argv] = [probe.probe_argv(t, probe.PROBE_S) for t in probe.terminators("node", ("node1",))]
    command = argv[-1]
    assert "-handshakes -url https://node1:8443" in command and "-cacert /run/secrets/capbench_ca" in command
    assert f"-duration {probe.PROBE_S}s" in command and "key" not in command.lower()


def test_the_cost_is_the_process_cpu_over_the_handshakes_completed():
    report = {"handshakes": 600, "duration_s": 3, "errors": {}, "protocol": "TLSv1.3", "cipher": "TLS_AES_128_GCM_SHA256"}
    found = probe.cost(report, 10.0, 11.2)
    assert found["cpu_ms_per_handshake"] == 2.0 and found["cpu_s"] == 1.2 and found["protocol"] == "TLSv1.3"
    assert probe.cost({"handshakes": 0, "errors": {"x509: unknown authority": 3}}, 1.0, 1.1)["cpu_ms_per_handshake"] is None
    assert probe.cost(report, None, 11.2)["cpu_ms_per_handshake"] is None


def test_what_the_process_spends_idle_is_taken_out():
    report = {"handshakes": 200, "duration_s": 4, "errors": {}}
    assert probe.cost(report, 10.0, 10.6, idle_s=0.2)["cpu_ms_per_handshake"] == 2.0
