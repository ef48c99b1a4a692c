"""How much of the CPU of each host that ends TLS went to new connections' handshakes at a target's capacity:
the step's full handshakes a second at that host times what one costs there (run.json's tls.handshake_cost,
capbench/engine/handshake_probe.py), over the CPU its process used in the step (the host figures). A target is
TLS-bound where that share is TLS_BOUND_PCT or more on the balancer or on a node: most of the CPU that paced it
went to opening connections, not to answering requests, and longer-lived connections (CONNECTION_LIFE=keep, a
session cache) or another place to end TLS (TLS=lb, node) would move its capacity more than the thread pool.

Where each host's handshakes come from:
- the balancer (TLS=lb, both): its frontend's full handshakes (HAProxy's counters, the step's client leg);
- a node with TLS=node: the connections the balancer passed through (the client leg's new connections a
  second; each a full handshake at most: a client that resumes a session makes it cheaper), shared among the
  nodes by the requests each served;
- a node with TLS=both: the connections the balancer opened to the nodes (the node leg), shared the same way.
The share is an estimate from two measurements taken apart: the probe's price on an idle cluster at the run's
start, the step's CPU under load; where the machine's speed moved between them both move together, but a
handshake under load may cost more (caches, contention) than on an idle host."""
from __future__ import annotations

from capbench.rundata.summary import serving_nodes

TLS_BOUND_PCT = 50.0


def node_shares(metrics: dict) -> dict[str, float]:
    """Each serving node's share of the step's requests (by Tomcat's count; evenly where a node has none)."""
    served = serving_nodes(metrics)
    rates = {node: f.get("requests_per_s") for node, f in served.items()}
    if not rates:
        return {}
    if any(rate is None for rate in rates.values()) or not sum(rates.values()):
        return dict.fromkeys(rates, 1 / len(rates))
    total = sum(rates.values())
    return {node: rate / total for node, rate in rates.items()}


def handshakes_per_s(leg: dict, metrics: dict) -> dict[str, tuple[float, str]]:
    """Per host that ended the step's TLS, its full handshakes a second and where the count comes from."""
    found: dict[str, tuple[float, str]] = {}
    if leg.get("tls") and leg.get("tls_ended_at") != "nodes" and leg.get("tls_full_handshakes_per_s") is not None:
        found["lb"] = (leg["tls_full_handshakes_per_s"], "the balancer's full handshakes")
    if leg.get("tls_ended_at") == "nodes":
        total, source = leg.get("new_connections_per_s"), "connections passed through, by the node's requests"
    else:
        total, source = (leg.get("node_leg") or {}).get("new_connections_per_s"), "the balancer's connections to it"
    if total:
        for node, share in node_shares(metrics).items():
            found[node] = (total * share, source)
    return found


def cpu_cores(host: str, metrics: dict) -> float | None:
    """The CPU cores the host's process used in the step: HAProxy's, or the node's java."""
    figures = metrics.get(host) or {}
    if host == "lb":
        return figures.get("haproxy_cpu_cores")
    pct, quota = figures.get("cpu_pct_of_quota"), figures.get("cpu_quota")
    return pct / 100 * quota if pct is not None and quota else None


def at_capacity(cost: dict | None, leg: dict | None, metrics: dict | None) -> dict | None:
    """The handshakes' share of each TLS-ending host's CPU in the step at a capacity, and whether the target is
    TLS-bound (with the sentence that says so); None where the run measured no handshake cost or the step has no
    client leg or host figures."""
    if not cost or not leg or not metrics:
        return None
    hosts = {}
    for host, (rate, source) in handshakes_per_s(leg, metrics).items():
        price, used = (cost.get(host) or {}).get("cpu_ms_per_handshake"), cpu_cores(host, metrics)
        if price is None or not used:
            continue
        hosts[host] = {"full_handshakes_per_s": round(rate, 2), "cpu_ms_per_handshake": price,
                       "cpu_cores": round(used, 3), "share_pct": round(100 * rate * price / 1000 / used, 1),
                       "counted": source}
    if not hosts:
        return None
    bound = [host for host, h in hosts.items() if h["share_pct"] >= TLS_BOUND_PCT]
    worst = max(hosts, key=lambda host: hosts[host]["share_pct"])
    h = hosts[worst]
    sentence = (f"{worst}'s handshakes took {h['share_pct']:g} % of its CPU ({h['full_handshakes_per_s']:g} full "
                f"handshakes/s at {h['cpu_ms_per_handshake']:g} ms each, of {h['cpu_cores']:g} core used)")
    return {"hosts": hosts, "tls_bound": bound, "sentence": sentence, "threshold_pct": TLS_BOUND_PCT}
