"""cluster/tls.sh, run as make setup and compose.sh run it, in a copy of the checkout's layout: a private authority,
the balancer's certificate that OpenSSL verifies for the name the load hosts use (lb) and each node's for its own
(TLS=both), keys that only their owner (or the host's user) reads, nothing printed, made once; and the
fingerprints a run records are OpenSSL's. What a probe through a balancer that passes TLS through (TLS=node) saw,
read from curl's own lines."""
from __future__ import annotations

import shutil
import stat
import subprocess

import pytest

from capbench.hosts import balancer_address, topology
from capbench.hosts.backend import ClusterError
from capbench.load import tls_facts
from capbench.load.tls_facts import fingerprint, parse_negotiated
from conftest import ROOT


@pytest.fixture
def made(tmp_path):
    (tmp_path / "cluster").mkdir()
    shutil.copy(ROOT / "cluster" / "tls.sh", tmp_path / "cluster" / "tls.sh")
    done = subprocess.run(["bash", str(tmp_path / "cluster" / "tls.sh"), "node1", "node2"], capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout == "" and done.stderr == ""  # no key, no path, nothing reaches a terminal or a log
    return tmp_path / ".capbench" / "tls"


def openssl(*args: str) -> str:
    return subprocess.run(["openssl", *args], capture_output=True, text=True, check=True, timeout=30).stdout


def test_the_balancers_certificate_verifies_against_the_private_authority_for_its_name(made):
    assert openssl("verify", "-CAfile", str(made / "ca.pem"), "-verify_hostname", "lb",
                   str(made / "lb.crt")).strip().endswith("OK")
    # The certificate in HAProxy's file is the same one, with its key after it.
    assert openssl("x509", "-in", str(made / "lb.pem"), "-noout", "-fingerprint", "-sha256") == \
        openssl("x509", "-in", str(made / "lb.crt"), "-noout", "-fingerprint", "-sha256")
    assert "PRIVATE KEY" in (made / "lb.pem").read_text() and "PRIVATE KEY" not in (made / "lb.crt").read_text()
    # Another name is refused: the certificate is the balancer's alone.
    other = subprocess.run(["openssl", "verify", "-CAfile", str(made / "ca.pem"), "-verify_hostname", "node1",
                            str(made / "lb.crt")], capture_output=True, text=True)
    assert other.returncode != 0


def test_each_nodes_certificate_verifies_for_its_own_name_and_the_balancers_and_its_key_is_pkcs8(made):
    for node, other in (("node1", "node2"), ("node2", "node1")):
        # Its own name (the balancer re-encrypts to it: TLS=both) and lb, the name a client dials where its TLS is
        # passed through to the node (TLS=node); its common name says which node it is.
        for name in (node, "lb"):
            assert openssl("verify", "-CAfile", str(made / "ca.pem"), "-verify_hostname", name,
                           str(made / f"{node}.crt")).strip().endswith("OK")
        assert openssl("x509", "-in", str(made / f"{node}.crt"), "-noout", "-subject").strip().endswith(f"CN = {node}")
        refused = subprocess.run(["openssl", "verify", "-CAfile", str(made / "ca.pem"), "-verify_hostname", other,
                                  str(made / f"{node}.crt")], capture_output=True, text=True)
        assert refused.returncode != 0
        # Tomcat's PEM reader takes a PKCS#8 key (PEM's "PRIVATE KEY", not SEC 1's "EC PRIVATE KEY"), after the
        # certificate in the same file.
        pem = (made / f"{node}.pem").read_text()
        assert " PRIVATE KEY-----" in pem and "EC PRIVATE KEY" not in pem
        assert pem.index("CERTIFICATE-----") < pem.index(" PRIVATE KEY-----")
    assert not (made / "node3.pem").exists()  # made for the nodes asked for only


def test_a_node_asked_for_later_gets_its_certificate_from_the_same_authority(made):
    before = {path.name: path.read_bytes() for path in made.iterdir()}
    subprocess.run(["bash", str(made.parent.parent / "cluster" / "tls.sh"), "node1", "node2", "node3"], check=True,
                   timeout=60)
    assert {path.name: path.read_bytes() for path in made.iterdir() if path.name in before} == before
    assert openssl("verify", "-CAfile", str(made / "ca.pem"), "-verify_hostname", "node3",
                   str(made / "node3.crt")).strip().endswith("OK")


def test_a_name_that_is_not_a_nodes_is_refused(made):
    done = subprocess.run(["bash", str(made.parent.parent / "cluster" / "tls.sh"), "../etc"], capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == 2 and "'../etc' is not a node's name" in done.stderr


def test_keys_are_readable_by_their_owner_alone_inside_a_folder_only_its_owner_enters(made):
    mode = lambda path: stat.S_IMODE(path.stat().st_mode)  # noqa: E731
    assert mode(made) == 0o700
    assert mode(made / "ca.key") == 0o600
    assert mode(made / "ca.pem") == 0o644 and mode(made / "lb.crt") == 0o644
    if (made / "lb.pem").stat().st_uid != (made / "ca.key").stat().st_uid:  # made as root: the balancer's user
        assert mode(made / "lb.pem") == 0o600 and (made / "lb.pem").stat().st_uid == 443
        assert mode(made / "node1.pem") == 0o600 and (made / "node1.pem").stat().st_uid == 444  # tomcat's
    else:
        assert mode(made / "lb.pem") == 0o644 and mode(made / "node1.pem") == 0o644


def test_a_nodes_certificate_made_before_it_named_the_balancer_is_made_anew(made):
    # A certificate of the right authority that does not name lb (as an earlier cluster/tls.sh made a node's).
    shutil.copy(made / "lb.crt", made / "node1.crt")
    subprocess.run(["bash", str(made.parent.parent / "cluster" / "tls.sh"), "node1"], check=True, timeout=60)
    assert openssl("verify", "-CAfile", str(made / "ca.pem"), "-verify_hostname", "node1",
                   str(made / "node1.crt")).strip().endswith("OK")


def test_made_once_a_second_run_keeps_them(made):
    before = {path.name: path.read_bytes() for path in made.iterdir()}
    subprocess.run(["bash", str(made.parent.parent / "cluster" / "tls.sh"), "node1"], check=True, timeout=60)
    assert {path.name: path.read_bytes() for path in made.iterdir()} == before


def test_the_recorded_fingerprint_is_openssls(made):
    for name in ("ca.pem", "lb.crt", "node1.crt"):
        expected = openssl("x509", "-in", str(made / name), "-noout", "-fingerprint", "-sha256").strip()
        assert expected.split("=", 1)[1] == fingerprint(made / name)


@pytest.mark.parametrize("header, expected", [
    ("TLSv1.3 TLS_AES_256_GCM_SHA384 http/1.1", {"protocol": "TLSv1.3", "cipher": "TLS_AES_256_GCM_SHA384",
                                                 "alpn": "http/1.1"}),
    ("TLSv1.2 ECDHE-ECDSA-AES128-GCM-SHA256", {"protocol": "TLSv1.2", "cipher": "ECDHE-ECDSA-AES128-GCM-SHA256",
                                               "alpn": None}),
])
def test_what_the_balancer_says_was_negotiated_is_read_word_by_word(header, expected):
    assert parse_negotiated(header) == expected


class AnsweringLoadHost:
    """The first load host's curl, answering with the headers the balancer sets (captured from TLS=both)."""
    def __init__(self, headers: str):
        self.headers = headers

    def exec(self, argv, timeout):
        assert "--cacert" in argv and "--insecure" not in argv and argv[-1].startswith("https://lb:8443/")
        return self.headers.encode()


BOTH_ANSWER = ("HTTP/1.1 200 \r\ncontent-type: text/plain\r\nx-capbench-node: node2\r\n"
               "x-capbench-node-tls: TLSv1.3 TLS_AES_128_GCM_SHA256\r\n"
               "x-capbench-tls: TLSv1.3 TLS_AES_256_GCM_SHA384 http/1.1\r\n\r\n")


def test_with_tls_both_the_record_has_each_nodes_fingerprint_and_the_node_legs_tls(made, monkeypatch):
    monkeypatch.setattr(tls_facts, "tls", lambda: "both")
    monkeypatch.setattr(balancer_address, "cluster_settings", lambda: {"TLS": "both"})
    topology.adopt(topology.Topology(("node1", "node2")))
    try:
        record = tls_facts.tls_record(AnsweringLoadHost(BOTH_ANSWER), certificates=made)
    finally:
        topology.adopt(None)
    assert record["terminates"] == "both" and record["url"] == "https://lb:8443"
    assert set(record["certificates_sha256"]) == {"ca", "lb", "node1", "node2"}
    assert record["certificates_sha256"]["node2"] == fingerprint(made / "node2.crt")
    assert record["negotiated"]["cipher"] == "TLS_AES_256_GCM_SHA384"
    assert record["node_leg"]["node"] == "node2"
    assert record["node_leg"]["negotiated"] == {"protocol": "TLSv1.3", "cipher": "TLS_AES_128_GCM_SHA256", "alpn": None}


def test_a_balancer_that_names_no_node_leg_under_tls_both_is_a_cluster_error(made, monkeypatch):
    monkeypatch.setattr(tls_facts, "tls", lambda: "both")
    monkeypatch.setattr(balancer_address, "cluster_settings", lambda: {"TLS": "both"})
    without = BOTH_ANSWER.replace("x-capbench-node-tls: TLSv1.3 TLS_AES_128_GCM_SHA256\r\n", "")
    topology.adopt(topology.Topology(("node1", "node2")))
    try:
        with pytest.raises(ClusterError, match="X-Capbench-Node-TLS missing"):
            tls_facts.tls_record(AnsweringLoadHost(without), certificates=made)
    finally:
        topology.adopt(None)


# curl -v's lines on the load host through a balancer passing TLS through, as it printed them (TLS=node).
PASSED_VIEW = """*   Trying 172.18.0.5:8443...
* Connected to lb (172.18.0.5) port 8443 (#0)
* ALPN: offers http/1.1
* SSL connection using TLSv1.3 / TLS_AES_256_GCM_SHA384
* ALPN: server did not agree on a protocol. Uses default.
* Server certificate:
*  subject: O=capbench; CN=node3
*  subjectAltName: host "lb" matched cert's "lb"
*  SSL certificate verify ok.
> GET /grind HTTP/1.1
"""


class VerboseLoadHost:
    def __init__(self, verbose: str):
        self.verbose = verbose

    def exec(self, argv, timeout):
        assert "--cacert" in argv and "-v" in argv and argv[-1].startswith("https://lb:8443/")
        return self.verbose.encode()


def test_with_tls_passed_through_the_record_is_what_the_client_saw_of_the_node(made, monkeypatch):
    monkeypatch.setattr(tls_facts, "tls", lambda: "node")
    monkeypatch.setattr(balancer_address, "cluster_settings", lambda: {"TLS": "node"})
    topology.adopt(topology.Topology(("node1", "node2", "node3")))
    subprocess.run(["bash", str(made.parent.parent / "cluster" / "tls.sh"), "node1", "node2", "node3"], check=True,
                   timeout=60)
    try:
        record = tls_facts.tls_record(VerboseLoadHost(PASSED_VIEW), certificates=made)
    finally:
        topology.adopt(None)
    assert record["terminates"] == "node" and record["url"] == "https://lb:8443"
    assert set(record["certificates_sha256"]) == {"ca", "node1", "node2", "node3"}  # the balancer's is not shown
    assert record["negotiated"] == {"protocol": "TLSv1.3", "cipher": "TLS_AES_256_GCM_SHA384", "alpn": None}
    assert record["node_leg"]["node"] == "node3" and record["node_leg"]["negotiated"] == record["negotiated"]


def test_a_probe_that_made_no_tls_connection_is_a_cluster_error():
    with pytest.raises(ClusterError, match="no TLS connection"):
        tls_facts.parse_client_view("*   Trying 172.18.0.5:8443...\n* Connected to lb\ncurl: (35) error\n")
    assert tls_facts.parse_client_view("* SSL connection using TLSv1.2 / ECDHE-ECDSA-AES128-GCM-SHA256\n"
                                       "* ALPN: server accepted http/1.1\n")[0]["alpn"] == "http/1.1"
