"""A step's client leg as the balancer counted it (capbench/load/client_leg.py) in words, for the console's table
and the report at each capacity."""
from __future__ import annotations


def client_leg_words(leg: dict) -> str:
    """A step's client leg as the balancer counted it (capbench/load/client_leg.py), in one line: "h2 over TLS,
    31 connections (10.3 new/s), 30 streams per HTTP/2 connection, 10 full handshakes/s, to the nodes h2, 33
    connections opened (1.1/s, 30.3 requests each)"."""
    def per_s(value: float | None) -> str:
        return "n/a" if value is None else f"{value:g}"
    if leg.get("tls_ended_at") == "nodes":  # TLS=node: connections alone, passed through
        return (f"TLS passed through to the nodes, {leg['connections']} connections "
                f"({per_s(leg['new_connections_per_s'])} new/s; their handshakes the nodes')")
    words = [f"{leg['protocol'] or 'no request'}{' over TLS' if leg['tls'] else ' in clear text'}",
             f"{leg['connections']} connections ({per_s(leg['new_connections_per_s'])} new/s)"]
    if leg.get("streams_per_h2_connection"):
        words.append(f"{leg['streams_per_h2_connection']:g} streams per HTTP/2 connection")
    if leg["tls"]:
        words.append(f"{per_s(leg['tls_full_handshakes_per_s'])} full handshakes/s "
                     f"({leg['tls_resumed']} of {leg['tls_handshakes']} resumed)")
    if node := leg.get("node_leg"):
        each = node["requests_per_connection_opened"]
        words.append(f"to the nodes {node['protocol'] or 'no request'}, {node['connections_opened']} connections opened "
                     f"({per_s(node['new_connections_per_s'])}/s, {'n/a' if each is None else f'{each:g}'} requests each)")
    return ", ".join(words)
