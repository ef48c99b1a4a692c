"""What a run records of the HTTP its nodes were spoken to in (run.json's node_http) where NODE_HTTP=2: one request
from the first load host through the balancer, as the load's requests go, and two accounts of it. The balancer's:
the HTTP version of its connection to the node that answered (X-Capbench-Node-HTTP: haproxy.cfg). The node's own:
the protocol Tomcat says the request came in (the Grinder's /info: "HTTP/2.0"), where the Grinder answers. Where the
client's TLS is passed through to the nodes (TLS=node) the balancer says nothing, and the probe offers HTTP/2 by ALPN
itself, as a client with HTTP=2 does: the node's connector chooses."""
from __future__ import annotations

import json

from capbench.hosts.backend import ClusterError
from capbench.hosts.balancer_address import base_url, ca_file, node_http, passed_through
from capbench.hosts.cluster_settings import grinder_path, has_grinder, routing_path
from capbench.load.tls_facts import parse_headers

NODE_HTTP_HEADER = "x-capbench-node-http"  # haproxy.cfg's, on each response: 1 or 2
SPOKEN = {"1": "HTTP/1.1", "2": "HTTP/2"}


def split_answer(out: str) -> tuple[dict[str, str], str]:
    """curl -D -'s output (the headers, a blank line, then the body) as headers by lower-case name, and the body."""
    head, _, body = out.replace("\r\n", "\n").partition("\n\n")
    return parse_headers(head), body


def parse_record(out: str, url: str, passed: bool) -> dict:
    """run.json's node_http from the probe's answer; ClusterError where the balancer spoke HTTP/1.1 to the node
    though the setting says 2 (a balancer not re-created since: `make up` makes it so)."""
    headers, body = split_answer(out)
    try:
        info = json.loads(body) if body.lstrip().startswith("{") else {}
    except ValueError:
        info = {}
    spoke = None if passed else SPOKEN.get(headers.get(NODE_HTTP_HEADER, ""))
    if not passed and spoke != "HTTP/2":
        raise ClusterError(f"NODE_HTTP=2, but the balancer spoke {spoke or 'an unnamed protocol'} to the node that "
                           "answered: it runs an older configuration; `make up` re-creates it")
    return {"setting": "2", "url": url, "node": headers.get("x-capbench-node") or info.get("node"),
            "balancer_spoke": spoke, "node_saw": info.get("request_protocol"), "node_secure": info.get("request_secure"),
            "probe": "curl on the first load host through the balancer"
                     + (", offering h2 by ALPN: the TLS is passed through to the node" if passed else "")}


def node_http_record(load_host, settings: dict[str, str] | None = None) -> dict | None:
    """run.json's node_http, of the cluster's `settings` (the run's); None where the nodes are spoken to in HTTP/1.1
    (NODE_HTTP=1.1)."""
    if node_http(settings) == "1.1":
        return None
    url = f"{base_url('lb')}{grinder_path()}/info" if has_grinder() else f"{base_url('lb')}{routing_path()}"
    passed = passed_through()
    certificate = ca_file(url)
    out = load_host.exec(["curl", "-fsS", "--http2" if passed else "--http1.1",
                          *(["--cacert", certificate] if certificate else []), "-D", "-", "--max-time", "10", url],
                         timeout=30).decode(errors="replace")
    return parse_record(out, url, passed)
