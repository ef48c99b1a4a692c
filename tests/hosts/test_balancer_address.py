"""Where the load goes by where TLS ends: TLS=lb sends every request for the balancer's bench port to its TLS
port, verified against the checkout's authority by oha (never --insecure), while a node's own port and a node's
connector stay clear text; and what TLS=lb cannot run yet is refused in one line before anything starts."""
from __future__ import annotations

import pytest

from capbench.commands import bench as bench_command
from capbench.hosts import balancer_address
from capbench.kinds import read_settings
from capbench.load.drivers import StepPlan
from capbench.load.drivers.oha import OhaDriver
from capbench.load.scenario import target_url
from capbench.settings.bench import SettingsError


@pytest.fixture
def tls_at(monkeypatch):
    def at(where: str) -> None:
        monkeypatch.setattr(balancer_address, "cluster_settings", lambda: {"TLS": where})
    return at


def plan(url: str) -> StepPlan:
    return StepPlan(url=url, rate=100, duration_s=5, connections=16, threads=2, timeout_s=10, users_file=None,
                    urls_file=None, session_requests=1)


def test_clear_text_where_tls_is_off(tls_at):
    tls_at("off")
    assert balancer_address.base_url("lb") == "http://lb:8080"
    assert target_url("lb", read_settings({})).startswith("http://lb:8080/")
    assert "--cacert" not in OhaDriver().argv(plan(target_url("lb", read_settings({}))))


def test_the_balancers_bench_port_over_tls_verified_against_the_authority(tls_at):
    tls_at("lb")
    url = target_url("lb", read_settings({}))
    assert url.startswith("https://lb:8443/")
    argv = OhaDriver().argv(plan(url))
    assert argv[argv.index("--cacert") + 1] == balancer_address.CA_FILE
    assert "--insecure" not in argv and url == argv[-1]


@pytest.mark.parametrize("where", ["lb", "both"])
def test_the_client_leg_is_tls_where_it_ends_at_the_balancer_or_is_re_encrypted(tls_at, where):
    tls_at(where)
    assert balancer_address.base_url("lb") == "https://lb:8443"


@pytest.mark.parametrize("where", ["lb", "both"])
def test_a_nodes_own_port_and_connector_stay_clear_text(tls_at, where):
    tls_at(where)
    assert balancer_address.base_url("lb", 8101) == "http://lb:8101"  # a duet's slot
    assert balancer_address.base_url("node1") == "http://node1:8080"  # the calibration's probe, a node's checks
    assert balancer_address.ca_file("http://node1:8080/info") is None


class Named:
    def __init__(self, name: str):
        self.name = name


def test_what_tls_at_the_balancer_cannot_run_is_refused_in_one_line(monkeypatch):
    monkeypatch.setattr(bench_command, "backend", lambda: Named("compose"))
    at_lb = {"TLS": "lb"}
    bench_command.refuse_what_tls_cannot_run(Named("cluster"), "oha", at_lb)  # what it runs
    bench_command.refuse_what_tls_cannot_run(Named("duet"), "wrk2", {"TLS": "off"})  # clear text: anything
    with pytest.raises(SettingsError, match=r"^TLS='lb' cannot run with LOADGEN=wrk2: wrk2 never verifies"):
        bench_command.refuse_what_tls_cannot_run(Named("cluster"), "wrk2", at_lb)
    with pytest.raises(SettingsError, match=r"^TLS='lb' cannot run make bench-duet yet"):
        bench_command.refuse_what_tls_cannot_run(Named("duet"), "oha", at_lb)
    with pytest.raises(SettingsError, match=r"^TLS='both' cannot run with LOADGEN=wrk2"):
        bench_command.refuse_what_tls_cannot_run(Named("cluster"), "wrk2", {"TLS": "both"})
    monkeypatch.setattr(bench_command, "backend", lambda: Named("swarm"))
    with pytest.raises(SettingsError, match=r"^TLS='lb' cannot run on the swarm backend yet"):
        bench_command.refuse_what_tls_cannot_run(Named("cluster"), "oha", at_lb)
    with pytest.raises(SettingsError, match=r"^TLS='both' cannot run on the swarm backend yet"):
        bench_command.refuse_what_tls_cannot_run(Named("cluster"), "oha", {"TLS": "both"})


def test_tls_passed_through_to_the_nodes_goes_to_the_tls_port_and_the_balancers_own_answers_stay_clear(tls_at):
    tls_at("node")
    assert balancer_address.base_url("lb") == "https://lb:8443"  # to a node's own TLS connector, through the balancer
    assert balancer_address.own_answer_url("/lb-health") == "http://lb:8080/lb-health"  # it ends no TLS itself
    tls_at("lb")
    assert balancer_address.own_answer_url("/lb-health") == "https://lb:8443/lb-health"


def test_what_tls_passed_through_cannot_run_is_refused_in_one_line(monkeypatch):
    monkeypatch.setattr(bench_command, "backend", lambda: Named("compose"))
    at_node = {"TLS": "node"}
    bench_command.refuse_what_tls_cannot_run(Named("cluster"), "oha", at_node)
    with pytest.raises(SettingsError, match=r"^HTTP=2 cannot run with TLS='node' and NODE_HTTP=1.1: .*speaks "
                                            r"HTTP/1.1 alone; use NODE_HTTP=2"):
        bench_command.refuse_what_tls_cannot_run(Named("single"), "oha", at_node, "2")
    # Where the nodes' connectors take HTTP/2 too, a client offering it by ALPN gets it from the node.
    bench_command.refuse_what_tls_cannot_run(Named("single"), "oha", at_node | {"NODE_HTTP": "2"}, "2")
    bench_command.refuse_what_tls_cannot_run(Named("single"), "oha", {"TLS": "both"}, "2")  # HTTP/2 ends at the lb
    for kind in ("failover", "stress"):
        with pytest.raises(SettingsError, match=rf"^TLS='node' cannot run make bench-{kind}: it reads the balancer's"):
            bench_command.refuse_what_tls_cannot_run(Named(kind), "oha", at_node)
    with pytest.raises(SettingsError, match=r"^TLS='node' cannot run with LOADGEN=wrk2"):
        bench_command.refuse_what_tls_cannot_run(Named("cluster"), "wrk2", at_node)
