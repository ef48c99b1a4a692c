"""No secrets in the repository: every file Git tracks (and every file that would be committed now) is scanned
for private keys, cloud and forge tokens and passwords written as literals; the generated credentials stay
ignored by Git, and every password the generator writes is one the database admits. The patterns are the usual
ones of secret scanners; each is shown to catch its kind."""
from __future__ import annotations

import re
import subprocess

import pytest

from conftest import ROOT

PATTERNS = {
    "private key": re.compile(r"-----BEGIN (?:[A-Z]+ )?PRIVATE KEY-----"),
    "AWS access key": re.compile(r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b"),
    "GitHub token": re.compile(r"\b(?:gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{40,})\b"),
    "Slack token": re.compile(r"\bxox[abposr]-[A-Za-z0-9-]{10,}\b"),
    "Google API key": re.compile(r"\bAIza[0-9A-Za-z_-]{35}\b"),
    # password = "…" / password: … with a literal value; ${VAR}, $VAR, {{ … }} and empty values are references.
    "password literal": re.compile(
        r"""(?i)(?:password|passwd|secret|api_?key|token)\b["']?\s*[:=]\s*["']?(?![$"'{<\s]|\*\*)"""
        r"""([^\s"',;(){}\[\]]{8,})(?![^\s"',;(){}\[\]]|[(\[])"""),
    "URL with credentials": re.compile(r"\b[a-z][a-z0-9+.-]*://[^/\s:@]+:[^/\s:@$]{4,}@[^\s]+"),
}

# Lines that look like a secret to the patterns but are not one, each with its reason.
NOT_SECRETS = {
    "tests/config/test_secrets.py": "the patterns' own examples",
}


def tracked_files() -> list[str]:
    listed = subprocess.run(["git", "ls-files", "--cached", "--others", "--exclude-standard", "-z"], cwd=ROOT,
                            capture_output=True, check=True).stdout.decode()
    return [path for path in listed.split("\0") if path and (ROOT / path).is_file()]


def findings(text: str) -> list[str]:
    return [kind for kind, pattern in PATTERNS.items() if pattern.search(text)]


@pytest.mark.parametrize("kind, example", [
    ("private key", "-----BEGIN OPENSSH PRIVATE KEY-----"),
    ("private key", "-----BEGIN RSA PRIVATE KEY-----"),
    ("AWS access key", "aws_access_key_id = AKIAIOSFODNN7EXAMPLE"),
    ("GitHub token", "ghp_" + "a1B2" * 9),
    ("Slack token", "xoxb-123456789012-abcdefghij"),
    ("Google API key", "AIza" + "x" * 35),
    ("password literal", 'STATS_PASSWORD="hunter2hunter2"'),
    ("password literal", "password: CorrectHorseBattery"),
    ("URL with credentials", "https://admin:s3cretpw@example.org/"),
])
def test_each_pattern_catches_its_kind(kind, example):
    assert kind in findings(example)


@pytest.mark.parametrize("reference", [
    'user "${STATS_USER}" insecure-password "${STATS_PASSWORD}"',
    "STATS_PASSWORD=$(openssl rand -hex 16)",
    "password: {{ stats_password }}",
    "user, password = stats_credentials()",
    'password = ""',
])
def test_references_to_secrets_are_not_secrets(reference):
    assert findings(reference) == []


def test_no_file_in_the_repository_holds_a_secret():
    found = []
    for path in tracked_files():
        if path in NOT_SECRETS:
            continue
        data = (ROOT / path).read_bytes()
        if b"\0" in data[:8192]:
            continue  # binary (a captured archive, a gzipped dump): no text to leak
        for number, line in enumerate(data.decode(errors="replace").splitlines(), 1):
            for kind in findings(line):
                found.append(f"{path}:{number}: {kind}: {line.strip()[:120]}")
    assert found == [], "\n".join(found)


def test_generated_credentials_are_ignored_by_git():
    for path in (".capbench/secrets.env", ".vagrant/machines/lb/libvirt/private_key"):
        done = subprocess.run(["git", "check-ignore", "--quiet", path], cwd=ROOT)
        assert done.returncode == 0, f"{path} is not ignored by Git"


def test_every_generated_password_is_one_the_database_admits_and_no_tool_reads_as_an_option():
    # cluster/secrets.sh's generator, run as that script defines it, against db/start's own rule.
    [generator] = [line for line in (ROOT / "cluster" / "secrets.sh").read_text().splitlines()
                   if line.startswith("random_password()")]
    [rule] = re.findall(r"\$password =~ (\S+) \]\]", (ROOT / "db" / "start").read_text())
    passwords = subprocess.run(["bash", "-c", f"{generator}\nfor _ in $(seq 300); do random_password; done"],
                               capture_output=True, text=True, check=True).stdout.split()
    assert len(passwords) == 300
    assert all(re.fullmatch(rule, p) and not p.startswith("-") for p in passwords), rule
