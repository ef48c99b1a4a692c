"""cluster/tls.sh, run as make setup runs it, in a copy of the checkout's layout: a private authority and the
balancer's certificate that OpenSSL verifies for the name the load hosts use (lb), keys that only their owner
(or the balancer's user) reads, nothing printed, made once; and the fingerprints a run records are OpenSSL's."""
from __future__ import annotations

import shutil
import stat
import subprocess

import pytest

from capbench.load.tls_facts import fingerprint, parse_negotiated
from conftest import ROOT


@pytest.fixture
def made(tmp_path):
    (tmp_path / "cluster").mkdir()
    shutil.copy(ROOT / "cluster" / "tls.sh", tmp_path / "cluster" / "tls.sh")
    done = subprocess.run(["bash", str(tmp_path / "cluster" / "tls.sh")], capture_output=True, text=True, timeout=60)
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


def test_keys_are_readable_by_their_owner_alone_inside_a_folder_only_its_owner_enters(made):
    mode = lambda path: stat.S_IMODE(path.stat().st_mode)  # noqa: E731
    assert mode(made) == 0o700
    assert mode(made / "ca.key") == 0o600
    assert mode(made / "ca.pem") == 0o644 and mode(made / "lb.crt") == 0o644
    if (made / "lb.pem").stat().st_uid != (made / "ca.key").stat().st_uid:  # made as root: the balancer's user
        assert mode(made / "lb.pem") == 0o600 and (made / "lb.pem").stat().st_uid == 443
    else:
        assert mode(made / "lb.pem") == 0o644


def test_made_once_a_second_run_keeps_them(made):
    before = {path.name: path.read_bytes() for path in made.iterdir()}
    subprocess.run(["bash", str(made.parent.parent / "cluster" / "tls.sh")], check=True, timeout=60)
    assert {path.name: path.read_bytes() for path in made.iterdir()} == before


def test_the_recorded_fingerprint_is_openssls(made):
    for name in ("ca.pem", "lb.crt"):
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
