"""What a step's client leg was, as the balancer counted it: the load's frontend's counters read before and
after the step (capbench/hosts/haproxy.py), their difference the step's. The protocol its requests came in
(h2 or http/1.1, by the streams of HAProxy's HTTP/2 and HTTP/1 muxes), the connections it opened and the TLS
handshakes they made (full, and resumed), per second of the step, and the streams an HTTP/2 connection carried;
and the leg from the balancer to the nodes (its backend's counters): the protocol it spoke to them (NODE_HTTP), the
connections it opened and the requests each carried.

Read where either leg is not clear-text HTTP/1.1 over kept connections (TLS, HTTP=2, CONNECTION_LIFE=per-request,
NODE_HTTP=2), for the steps sent through the balancer's bench ports alone: a duet's two steps
share the frontend, so neither could be told from the other. The counters are the frontend's, so what else reaches it during the step is counted too: the balancer's
and the load hosts' health checks (compose.yaml: one request each every few seconds, over HTTP/1.1), a person's
curl; the protocol is said of the generator's requests, the others set apart by the generator's own count."""
from __future__ import annotations

from capbench.hosts import haproxy
from capbench.hosts.backend import ClusterError
from capbench.hosts.balancer_address import passed_through

NODE = "node."  # the nodes' backend's counters among read()'s, by this prefix


def wanted(tls: str, http: str, connection_life: str = "keep", node_http: str = "1.1") -> bool:
    """Whether steps record their client leg: with TLS or HTTP/2 on it or to the nodes, or connections that do not
    last the step."""
    return tls != "off" or http != "1.1" or connection_life != "keep" or node_http != "1.1"


def read() -> dict[str, int] | None:
    """The frontend's counters now (the TCP frontend's where TLS=node), and the nodes' backend's (NODE) where the
    balancer reads the requests; None where the balancer did not answer (re-created by a fault bench): the step is
    measured all the same, without its client leg."""
    try:
        if passed_through():
            return haproxy.frontend_counters(haproxy.PASSTHROUGH_FRONTEND)
        return haproxy.frontend_counters() | {NODE + name: count for name, count in haproxy.backend_counters().items()}
    except ClusterError:
        return None


def protocol(h1_streams: int, h2_streams: int, others: int) -> str | None:
    """The protocol the step's requests came in: h2 or http/1.1 where the other carried no more than the requests
    that were not the generator's (`others`), mixed where it did, None where no request came."""
    if not h1_streams and not h2_streams:
        return None
    major, minor = ("h2", h1_streams) if h2_streams >= h1_streams else ("http/1.1", h2_streams)
    return major if minor <= others else "mixed"


def figures(before: dict[str, int], after: dict[str, int], seconds: float, tls: bool, answered: int,
            passed: bool = False) -> dict:
    """The step's client leg from the counters before and after it, over its `seconds`; `answered`: the requests
    the generator had answered (the rest of the frontend's are health checks', or cut at the step's end).
    `passed`: the TLS was passed through to the nodes (TLS=node), so the balancer counted connections alone: no
    request, stream or handshake of it was the balancer's to see (the handshakes were the nodes')."""
    delta = {name: after.get(name, 0) - before.get(name, 0) for name in after}
    requests, connections = delta.get("req_tot", 0), delta.get("conn_tot", 0)
    h1_streams, h2_streams = delta.get("h1_total_streams", 0), delta.get("h2_backend_total_streams", 0)
    h2_connections = delta.get("h2_total_connections", 0)

    def per_s(count: int) -> float | None:
        return round(count / seconds, 2) if seconds > 0 else None
    leg = {"protocol": protocol(h1_streams, h2_streams, max(0, requests - answered)), "tls": tls,
           "requests": requests, "h1_streams": h1_streams, "h2_streams": h2_streams,
           "connections": connections, "new_connections_per_s": per_s(connections), "h2_connections": h2_connections,
           "streams_per_h2_connection": round(h2_streams / h2_connections, 1) if h2_connections else None}
    if passed:
        unseen = ("requests", "h1_streams", "h2_streams", "h2_connections", "streams_per_h2_connection")
        return leg | dict.fromkeys(unseen) | {"protocol": None, "tls_ended_at": "nodes", "tls_handshakes": None,
                                              "tls_resumed": None, "tls_full_handshakes_per_s": None}
    if tls:
        handshakes, resumed = delta.get("ssl_sess", 0), delta.get("ssl_reused_sess", 0)
        leg |= {"tls_handshakes": handshakes, "tls_resumed": resumed,
                "tls_full_handshakes_per_s": per_s(handshakes - resumed)}
    if any(name.startswith(NODE) for name in delta):
        leg["node_leg"] = node_leg({name.removeprefix(NODE): count for name, count in delta.items()
                                    if name.startswith(NODE)}, per_s)
    return leg


def node_leg(delta: dict[str, int], per_s) -> dict:
    """The balancer's leg to the nodes over the step, from the nodes' backend's counters' `delta`: the protocol it
    spoke (its health checks' streams, one a check, set apart from the requests'), the requests it sent, the
    connections it opened for them (the checks' own are not counted there) and the requests per connection opened."""
    requests, opened = delta.get("req_tot", 0), delta.get("connect", 0)
    h1_streams, h2_streams = delta.get("h1_total_streams", 0), delta.get("h2_backend_total_streams", 0)
    return {"protocol": protocol(h1_streams, h2_streams, max(0, h1_streams + h2_streams - requests)),
            "requests": requests, "connections_opened": opened, "new_connections_per_s": per_s(opened),
            "reused": delta.get("reuse", 0), "requests_per_connection_opened": round(requests / opened, 1) if opened else None}
