"""The direct check's price of a request, whole or one machine's share, and the ceilings it gives where the
balancer and the load host run."""
from __future__ import annotations

from capbench.engine import ceiling_probe

CHECK = {"steps": [{"rate": 4000.0, "achieved_rps": 4000.0, "passed": True, "valid": True, "haproxy_cores": 0.2,
                    "generator_cores": 0.2},
                   {"rate": 8000.0, "achieved_rps": 7998.2, "passed": True, "valid": True, "haproxy_cores": 0.4,
                    "generator_cores": 0.43},
                   {"rate": 16000.0, "achieved_rps": 10261.8, "passed": False, "valid": True,
                    "haproxy_cores": 0.6, "generator_cores": 0.7}],
         "carried_rps": 7998.2, "carried_all": False, "harness_ms_per_request": 0.1038}
SETTINGS = {"NODE1_CPUS": "0.5", "NODE2_CPUS": "0.4", "NODE3_CPUS": "0.3"}


def test_the_price_of_one_machines_hosts_comes_from_the_highest_step_that_held():
    assert ceiling_probe.price(CHECK, None) == 0.1038
    assert ceiling_probe.price(CHECK, ("lb",)) == round(1000 * 0.4 / 7998.2, 4) == 0.05
    assert ceiling_probe.price(CHECK, ("load",)) == round(1000 * 0.43 / 7998.2, 4)
    assert ceiling_probe.price({"steps": CHECK["steps"][2:]}, ("lb",)) is None  # nothing held


def test_the_ceiling_on_one_machine_and_on_machines_of_their_own():
    everything = {"name": "this machine", "cpus": 2.0, "hosts": ["node1", "node2", "node3", "lb", "load"]}
    alone = ceiling_probe.ceiling({**CHECK, "machines": [everything]}, SETTINGS).beside(("node1", "node2", "node3"))
    assert alone.cores_left == 0.8 and alone.rps == 7707.1  # 0.8 core over 0.1038 ms, below the 7998.2/s carried
    apart = [{"name": "m1", "cpus": 2.0, "hosts": ["node1", "node2", "node3"]},
             {"name": "m2", "cpus": 2.0, "hosts": ["lb", "load"]}]
    moved = ceiling_probe.ceiling({**CHECK, "machines": apart}, SETTINGS).beside(("node1", "node2", "node3"))
    # Two cores of their own: by CPU 19267.8/s, but no more than the check carried on this machine.
    assert moved.machine == "m2" and moved.by_cpu_rps == 19267.8 and moved.rps == 7998.2
    assert ceiling_probe.ceiling(CHECK, SETTINGS).beside(("node1",)).rps is None  # machines not found: not counted


def test_http2_on_the_clients_leg_is_checked_anew_and_http_1_1_keeps_its_key(monkeypatch):
    from types import SimpleNamespace
    monkeypatch.setattr(ceiling_probe, "url", lambda: "http://lb:8080/capbench-ceiling")
    monkeypatch.setattr(ceiling_probe, "machine", lambda: "this machine")
    monkeypatch.setattr(ceiling_probe, "backend", lambda: SimpleNamespace(name="compose"))

    def bench(http: str, connection_life: str = "keep"):
        return SimpleNamespace(driver=SimpleNamespace(name="oha"), version="oha 1.16.0",
                               loads=SimpleNamespace(hosts=["load"]),
                               settings=SimpleNamespace(threads=2, http=http, connection_life=connection_life))
    assert ceiling_probe.key(bench("1.1"), None) == ("http://lb:8080/capbench-ceiling | this machine | compose | "
                                                   "oha oha 1.16.0 | load hosts 1 | threads 2 | harness on not counted")
    assert ceiling_probe.key(bench("2"), None) == ceiling_probe.key(bench("1.1"), None) + " | HTTP 2"
    # A connection per request costs the generator and the balancer a connect (and a handshake) each: anew.
    assert ceiling_probe.key(bench("1.1", "per-request"), None) == (ceiling_probe.key(bench("1.1"), None)
                                                                    + " | connections per-request")


def test_with_tls_passed_through_the_direct_check_is_not_made_and_says_why(monkeypatch):
    from capbench.hosts import balancer_address
    monkeypatch.setattr(balancer_address, "cluster_settings", lambda: {"TLS": "node"})
    assert "balancer passes the client's TLS through" in ceiling_probe.not_checked()
    assert ceiling_probe.url() == "http://lb:8080/capbench-ceiling"
    monkeypatch.setattr(balancer_address, "cluster_settings", lambda: {"TLS": "lb"})
    assert ceiling_probe.not_checked() is None and ceiling_probe.url() == "https://lb:8443/capbench-ceiling"
