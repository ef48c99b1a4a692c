"""Where the load goes: the balancer's address as the load hosts reach it, by where the client's TLS ends
(TLS, the profile's: cluster/profiles/). TLS=off: http://lb:8080. TLS=lb, both and node: https://lb:8443, the
certificate verified against the checkout's private authority (cluster/tls.sh), whose certificate every load host
has at CA_FILE: the balancer's (lb; with both, the balancer re-encrypts to each node's TLS connector: haproxy/start),
or the answering node's, which names lb too (node: the balancer passes the TLS through). A node's own port on the
balancer (a duet's slot, 8101 …) and a node's clear connector (8080) stay clear text, and so do the balancer's own
answers where it passes TLS through (own_answer_url)."""
from __future__ import annotations

from capbench.hosts.cluster_settings import cluster_settings

BALANCER = "lb"
BALANCER_PORT = 8080  # haproxy.cfg's frontend bench, clear text
BALANCER_TLS_PORT = 8443  # the same frontend's TLS port (TLS=lb)
CA_FILE = "/run/secrets/capbench_ca"  # on each load host (compose.yaml's secret capbench_ca)
TLS_HEADER = "X-Capbench-TLS"  # what the client's connection negotiated, on each response (haproxy.cfg)
NODE_TLS_HEADER = "X-Capbench-Node-TLS"  # what the balancer's connection to the node negotiated (TLS=both)
CLIENT_TLS = ("lb", "both", "node")  # the TLS settings whose client leg is TLS, to the balancer's :8443
NODE_TLS = ("both",)  # those where the balancer re-encrypts to each node's connector
PASSED_THROUGH = ("node",)  # those where the balancer passes the client's TLS through to a node's connector


def tls() -> str:
    """Where TLS ends: "off", "lb" (at the balancer), "both" (at the balancer, re-encrypted to the nodes) or "node"
    (at the nodes: passed through the balancer)."""
    return cluster_settings().get("TLS", "off")


def node_http(settings: dict[str, str] | None = None) -> str:
    """What the balancer speaks to the nodes, and the nodes' connectors take: "1.1", or "2" (HTTP/2: NODE_HTTP,
    tomcat-conf/tunables.env), which is also what a client whose TLS is passed through to a node may offer; of the
    cluster's `settings` (a run's, make tune's point's), this command's by default."""
    return (cluster_settings() if settings is None else settings).get("NODE_HTTP", "1.1")


def refused_on(backend_name: str, where: str) -> str | None:
    """Why TLS=`where` cannot run on this backend (only Compose's balancer is given a certificate so far), or
    None where it can: `make up` and every bench ask this one rule."""
    if where == "off" or backend_name == "compose":
        return None
    return (f"TLS='{where}' cannot run on the {backend_name} backend yet: its balancer has no certificate; use "
            "BACKEND=compose, or TLS=off")


def base_url(host: str, port: int = BALANCER_PORT) -> str:
    """scheme://host:port for a request to `host` on `port`: the balancer's bench port over TLS where the client's
    leg is TLS (CLIENT_TLS), everything else in clear text."""
    if host == BALANCER and port == BALANCER_PORT and tls() in CLIENT_TLS:
        return f"https://{host}:{BALANCER_TLS_PORT}"
    return f"http://{host}:{port}"


def ca_file(url: str) -> str | None:
    """The authority a client verifies `url`'s certificate against: CA_FILE for https, None for clear text."""
    return CA_FILE if url.startswith("https://") else None


def passed_through() -> bool:
    """Whether the balancer passes the client's TLS through to the nodes (PASSED_THROUGH): it reads no request."""
    return tls() in PASSED_THROUGH


def own_answer_url(path: str) -> str:
    """The balancer's own answer at `path` (/lb-health, /capbench-ceiling): over the client's TLS where the balancer
    ends it, in clear text where it passes TLS through (it reads no request there: any path is a node's)."""
    if passed_through():
        return f"http://{BALANCER}:{BALANCER_PORT}{path}"
    return f"{base_url(BALANCER)}{path}"
