"""What a run records of its TLS (run.json's tls) where TLS is not off: where it ended, the SHA-256 fingerprints
of the private authority's and the balancer's certificates (read from the public certificates on this machine,
never from a key), and what a connection from the first load host negotiated, as the balancer itself reported it
on the response (X-Capbench-TLS: haproxy.cfg). The probe is curl on the load host, over HTTP/1.1 and with the
certificate verified, as the load generator's connections are: both link the load host's OpenSSL, so the
protocol and cipher are those the generator gets. Where the balancer re-encrypts (TLS=both), also each node's
certificate's fingerprint and what the balancer's connection to the node that answered negotiated
(X-Capbench-Node-TLS), with the TLS the nodes run. Where the balancer passes TLS through (TLS=node) it says nothing:
what the client negotiated, and with which node, is the probe's own account (curl's verbose lines), the node named
by the certificate it showed."""
from __future__ import annotations

import hashlib
import re
import ssl
from pathlib import Path

from capbench.hosts import topology
from capbench.hosts.backend import ClusterError
from capbench.hosts.balancer_address import (
    NODE_TLS,
    NODE_TLS_HEADER,
    TLS_HEADER,
    base_url,
    ca_file,
    passed_through,
    tls,
)
from capbench.hosts.cluster_settings import routing_path
from capbench.hosts.topology import ROOT

CERTIFICATES = ROOT / ".capbench" / "tls"  # cluster/tls.sh


def fingerprint(certificate: Path) -> str:
    """SHA-256 of the certificate's DER form, as `openssl x509 -fingerprint -sha256` prints it (AB:CD:…)."""
    der = ssl.PEM_cert_to_DER_cert(certificate.read_text())
    digest = hashlib.sha256(der).hexdigest().upper()
    return ":".join(digest[i:i + 2] for i in range(0, len(digest), 2))


def parse_negotiated(header: str) -> dict[str, str | None]:
    """X-Capbench-TLS's value ("TLSv1.3 TLS_AES_256_GCM_SHA384 http/1.1"; no ALPN: the last word absent)."""
    words = header.split()
    return {"protocol": words[0] if words else None, "cipher": words[1] if len(words) > 1 else None,
            "alpn": words[2] if len(words) > 2 else None}


# The nodes' TLS (tomcat-conf/render-config.sh's connector): Tomcat's JSSE, the JVM's own TLS.
NODE_TLS_IMPLEMENTATION = "JSSE (OpenJDK 17)"


def probe(load_host, *shown: str) -> str:
    """One verified request from the load host, over HTTP/1.1, its body dropped; what `shown` asks curl to print."""
    url = f"{base_url('lb')}{routing_path()}"
    return load_host.exec(["curl", "-fsS", "--http1.1", "--cacert", ca_file(url), "-o", "/dev/null", *shown,
                           "--max-time", "10", url], timeout=30).decode()


def parse_headers(head: str) -> dict[str, str]:
    """An answer's header lines (curl -D -'s) by lower-case name; the status line, which has no colon, left out."""
    return {name.strip().lower(): value.strip() for name, sep, value in (line.partition(":") for line in head.splitlines())
            if sep}


def answer_headers(load_host) -> dict[str, str]:
    """The headers of the balancer's answer to one request from the load host, by lower-case name."""
    return parse_headers(probe(load_host, "-D", "-"))


def client_view(load_host) -> str:
    """curl's verbose account of one request from the load host: the TLS it negotiated, the certificate shown."""
    return probe(load_host, "-v", "--stderr", "-")


def parse_client_view(verbose: str) -> tuple[dict[str, str | None], str | None]:
    """What curl's verbose lines say the connection negotiated, and the common name of the certificate shown
    ("* SSL connection using TLSv1.3 / TLS_AES_256_GCM_SHA384", "* ALPN: server accepted http/1.1",
    "*  subject: O=capbench; CN=node1"); ClusterError where curl made no TLS connection."""
    using = re.search(r"SSL connection using (\S+) / (\S+)", verbose)
    if using is None:
        raise ClusterError("the probe made no TLS connection to the balancer's TLS port (curl named none)")
    alpn = re.search(r"ALPN[:,] server accepted (?:to use )?(\S+)", verbose)
    subject = re.search(r"subject: .*\bCN ?= ?([^;,\s]+)", verbose)
    return ({"protocol": using.group(1), "cipher": using.group(2), "alpn": alpn.group(1) if alpn else None},
            subject.group(1) if subject else None)


def negotiated_on(headers: dict[str, str], header: str, what: str) -> dict[str, str | None]:
    """`header`'s account of a connection's TLS; ClusterError when the balancer said nothing (not ending TLS
    there, or an older haproxy.cfg)."""
    if header.lower() not in headers:
        raise ClusterError(f"the balancer named no TLS of {what} on its answer ({header} missing)")
    return parse_negotiated(headers[header.lower()])


def tls_record(load_host, certificates: Path = CERTIFICATES) -> dict | None:
    """run.json's tls; None where TLS=off."""
    if tls() == "off":
        return None
    if passed_through():
        return passed_through_record(load_host, certificates)
    headers = answer_headers(load_host)
    record = {"terminates": tls(), "url": base_url("lb"),
              "certificates_sha256": {"ca": fingerprint(certificates / "ca.pem"), "lb": fingerprint(certificates / "lb.crt")},
              "negotiated": negotiated_on(headers, TLS_HEADER, "the client's connection"),
              "probe": "curl --http1.1 on the first load host, verified"}
    if tls() in NODE_TLS:
        record["certificates_sha256"] |= {node: fingerprint(certificates / f"{node}.crt") for node in topology.NODES}
        record["node_leg"] = {"node": headers.get("x-capbench-node"), "implementation": NODE_TLS_IMPLEMENTATION,
                              "negotiated": negotiated_on(headers, NODE_TLS_HEADER, "its connection to the node"),
                              "verified": "each node's certificate against the authority, for the node's name (HAProxy)"}
    return record


def passed_through_record(load_host, certificates: Path) -> dict:
    """run.json's tls where TLS=node: the client's TLS is the node's, seen by the client alone."""
    negotiated, node = parse_client_view(client_view(load_host))
    return {"terminates": tls(), "url": base_url("lb"),
            "certificates_sha256": {"ca": fingerprint(certificates / "ca.pem")}
            | {name: fingerprint(certificates / f"{name}.crt") for name in topology.NODES},
            "negotiated": negotiated,
            "node_leg": {"node": node, "implementation": NODE_TLS_IMPLEMENTATION, "negotiated": negotiated,
                         "verified": "by the client: the node's certificate against the authority, for the name lb"},
            "probe": "curl --http1.1 -v on the first load host, verified: the balancer passes the TLS through"}
