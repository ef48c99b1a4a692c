"""What a run records of its TLS (run.json's tls) where TLS=lb: where the client's TLS ended, the SHA-256
fingerprints of the private authority's and the balancer's certificates (read from the public certificates on
this machine, never from a key), and what a connection from the first load host negotiated, as the balancer
itself reported it on the response (X-Capbench-TLS: haproxy.cfg). The probe is curl on the load host, over
HTTP/1.1 and with the certificate verified, as the load generator's connections are: both link the load host's
OpenSSL, so the protocol and cipher are those the generator gets."""
from __future__ import annotations

import hashlib
import ssl
from pathlib import Path

from capbench.hosts.backend import ClusterError
from capbench.hosts.balancer_address import TLS_HEADER, base_url, ca_file, tls
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


def negotiated(load_host) -> dict[str, str | None]:
    """What the load host's connection to the balancer negotiated; ClusterError when the balancer said nothing
    (not terminating TLS, or an older haproxy.cfg)."""
    url = f"{base_url('lb')}{routing_path()}"
    out = load_host.exec(["curl", "-fsS", "--http1.1", "--cacert", ca_file(url), "-o", "/dev/null", "-D", "-",
                          "--max-time", "10", url], timeout=30).decode()
    for line in out.splitlines():
        name, _, value = line.partition(":")
        if name.strip().lower() == TLS_HEADER.lower():
            return parse_negotiated(value.strip())
    raise ClusterError(f"the balancer named no TLS on its answer to {url} ({TLS_HEADER} missing)")


def tls_record(load_host, certificates: Path = CERTIFICATES) -> dict | None:
    """run.json's tls; None where TLS=off."""
    if tls() == "off":
        return None
    return {"terminates": tls(), "url": base_url("lb"),
            "certificates_sha256": {"ca": fingerprint(certificates / "ca.pem"), "lb": fingerprint(certificates / "lb.crt")},
            "negotiated": negotiated(load_host), "probe": "curl --http1.1 on the first load host, verified"}
