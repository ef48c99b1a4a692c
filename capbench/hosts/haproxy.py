"""HAProxy's runtime API on the lb host (a UNIX socket there, reached through haproxy/lb-api): the commands the
harness sends and the one parser of each answer. Server states, weights and queues; the rings are read and
parsed by capbench/hosts/haproxy_log.py."""
from __future__ import annotations

import csv
import io
import time

from capbench.hosts import topology
from capbench.hosts.backend import ClusterError, backend
from capbench.hosts.balancer_address import passed_through

BACKEND = "nodes"  # haproxy.cfg's backend of the Tomcat nodes
PASSTHROUGH_BACKEND = "nodes_passthrough"  # the same nodes' TLS connectors, in TCP mode, where TLS=node
LB_API = "/opt/capbench/bin/lb-api"
# `show servers state`: srv_op_state 2 is running; bit 0 of srv_admin_state is forced maintenance.
RUNNING = "2"
MAINT_BIT = 1


def api(command: str) -> str:
    """One runtime-API command; HAProxy's answer as it gave it."""
    return backend().exec("lb", [LB_API, command]).stdout.decode()


def parse_stat(text: str) -> list[dict[str, str]]:
    """`show stat`: one dict per proxy/server row, keyed by its CSV header."""
    return list(csv.DictReader(io.StringIO(text.lstrip("# "))))


def stat_rows() -> list[dict[str, str]]:
    return parse_stat(api("show stat"))


def server_stats(rows: list[dict[str, str]] | None = None) -> dict[str, dict[str, str]]:
    """Each node's row of `show stat` (weight, status, sessions, queue, ...)."""
    return {row["svname"]: row for row in (rows if rows is not None else stat_rows())
            if row.get("pxname") == BACKEND and row["svname"] in topology.NODES}


def requests_in_nodes(rows: list[dict[str, str]] | None = None) -> int:
    """Requests HAProxy has queued for, or in progress on, the nodes right now."""
    for row in rows if rows is not None else stat_rows():
        if row.get("pxname") == BACKEND and row.get("svname") == "BACKEND":
            return int(row["qcur"] or 0) + int(row["scur"] or 0)
    raise ClusterError(f"HAProxy's show stat has no BACKEND row for {BACKEND}")


FRONTEND = "bench"  # haproxy.cfg's frontend of the load: its clear, TLS and node ports
PASSTHROUGH_FRONTEND = "bench_passthrough"  # its TCP frontend where TLS=node: the TLS port, passed through
# The frontend's counters a step's client leg is told by (capbench/load/client_leg.py): connections and requests,
# HAProxy's SSL module (handshakes, those resumed) and its HTTP/1 and HTTP/2 muxes (connections, streams).
FRONTEND_COUNTERS = ("conn_tot", "req_tot", "ssl_sess", "ssl_reused_sess", "h1_total_connections",
                     "h1_total_streams", "h2_total_connections", "h2_backend_total_streams")


# The nodes' backend's counters a step's node leg is told by: the requests it sent, the connections it opened to the
# nodes and the requests that reused one, and its HTTP/1 and HTTP/2 muxes' streams (the health checks' among them).
BACKEND_COUNTERS = ("req_tot", "connect", "reuse", "h1_total_streams", "h2_backend_total_streams")


def parse_typed_counters(text: str, wanted: tuple[str, ...] = FRONTEND_COUNTERS, line: str = "F") -> dict[str, int]:
    """`show stat PROXY 1 -1 typed`'s frontend line per field ("F.2.0.48.req_tot.1:MCP:u64:11"; `line` B: a
    backend's, `show stat PROXY 2 -1 typed`): the `wanted` fields' values summed over HAProxy's processes (one
    here); a field this HAProxy does not count is absent."""
    counters: dict[str, int] = {}
    for row in text.splitlines():
        key, _, value = row.partition(":")
        parts = key.split(".")
        if len(parts) == 6 and parts[0] == line and parts[4] in wanted:
            counters[parts[4]] = counters.get(parts[4], 0) + int(value.rsplit(":", 1)[-1] or 0)
    return counters


def frontend_counters(frontend: str = FRONTEND) -> dict[str, int]:
    """The load's frontend's cumulative counters (FRONTEND_COUNTERS), now."""
    return parse_typed_counters(api(f"show stat {frontend} 1 -1 typed"))


def backend_counters() -> dict[str, int]:
    """The nodes' backend's cumulative counters (BACKEND_COUNTERS), now."""
    return parse_typed_counters(api(f"show stat {BACKEND} 2 -1 typed"), BACKEND_COUNTERS, "B")


def parse_server_states(text: str) -> dict[str, dict[str, str]]:
    """`show servers state`: per server, whether its checks hold it running and whether it is in maintenance
    ("up": yes|no, "admin": maint|ready), its address and the weight it was given (srv_uweight)."""
    states = {}
    for line in text.splitlines()[2:]:  # a format version, then the header
        row = line.split()
        if len(row) > 7:
            states[row[3]] = {"up": "yes" if row[5] == RUNNING else "no",
                              "admin": "maint" if int(row[6]) & MAINT_BIT else "ready", "address": row[4],
                              "weight": row[7]}
    return states


def server_states() -> dict[str, dict[str, str]]:
    return parse_server_states(api(f"show servers state {BACKEND}"))


def nodes_up() -> set[str]:
    """The nodes HAProxy's health checks hold running."""
    return {node for node, state in server_states().items() if state["up"] == "yes"}


def _set(command: str, what: str) -> None:
    answer = api(command).strip()
    if answer:
        raise ClusterError(f"HAProxy refused {what}: {answer}")


def set_state(node: str, state: str) -> None:
    """ready (in rotation) or maint (taken out)."""
    _set(f"set server {BACKEND}/{node} state {state}", f"to set {node} {state}")


def set_rotation(nodes_in: tuple[str, ...]) -> None:
    """Puts `nodes_in` in the balancer's rotation and every other node in maintenance, and re-seats the nodes
    of the rotation (_reseat), so the traffic that follows goes by the weights from its first request."""
    for node in topology.NODES:
        if node not in nodes_in:
            set_state(node, "maint")
    _reseat(nodes_in)


def reseat_rotation() -> None:
    """After make up: the nodes in rotation re-seated as set_rotation does, so traffic sent straight after it
    follows the weights; a node in maintenance stays there."""
    states = server_states()
    _reseat(tuple(node for node in topology.NODES if states.get(node, {}).get("admin") == "ready"))


def _reseat(nodes: tuple[str, ...]) -> None:
    """Each node taken out and put back, one at a time, in two passes. HAProxy 2.6's weighted round robin places
    a node coming back by the round in progress, which a rotation change leaves at odd positions: after every
    node was down at once (`make up`), or one node measured alone, the first node back can be placed far ahead
    of the others and get a small share of the next requests (weights 5:4:3, 60 requests went 11:28:21, or
    0:35:25). One pass left that in about one history of six (HAProxy 2.6.12, random histories of rotations and
    requests, docs/findings.md); after the first pass every node is in the round, and the second places each by
    the full weights: no share then missed its weight by more than one request of 60."""
    for _ in range(2):
        for node in nodes:
            set_state(node, "maint")
            set_state(node, "ready")


def set_weights(weights: dict[str, int]) -> None:
    """Each node's balancer weight (no restart; HAProxy keeps its state), in the TCP backend too where TLS=node
    (its servers follow the HTTP backend's state, not their weights)."""
    backends = (BACKEND, PASSTHROUGH_BACKEND) if passed_through() else (BACKEND,)
    for node, weight in weights.items():
        for name in backends:
            _set(f"set weight {name}/{node} {weight}", f"weight {weight} for {node}")


def wait_until_up(nodes: tuple[str, ...], timeout_s: float = 30) -> None:
    """Waits until the health checks hold every one of `nodes` running: a node that failed its checks while
    overloaded (its own search's last steps) needs a few seconds to pass them again before it takes traffic."""
    deadline = time.monotonic() + timeout_s
    while not set(nodes) <= nodes_up() and time.monotonic() < deadline:
        time.sleep(0.5)


def still_down(nodes: tuple[str, ...], timeout_s: float) -> list[str]:
    """Those of `nodes` HAProxy's checks do not hold running after waiting up to timeout_s for them."""
    wait_until_up(nodes, timeout_s)
    up = nodes_up()
    return [node for node in nodes if node not in up]
