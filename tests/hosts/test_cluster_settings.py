"""The cluster's settings by one precedence rule (cluster/load-settings.sh): the environment over the profile over
the Tomcat tunables over the credentials. The shell that brings the cluster up and the harness that records and
uses the settings resolve the same values from the same files, and a bad one is refused by both alike."""
from __future__ import annotations

import os

import pytest

from capbench.hosts.cluster_settings import SettingsRefused, cluster_settings
from conftest import ROOT, run


@pytest.fixture
def profile():
    """A profile of its own that also sets a tunable (TOMCAT_MAX_THREADS), beside the shipped small one."""
    name = f"test-precedence-{os.getpid()}"
    path = ROOT / "cluster" / "profiles" / f"{name}.env"
    path.write_text((ROOT / "cluster" / "profiles" / "small.env").read_text() + "TOMCAT_MAX_THREADS=7\n")
    yield name
    path.unlink()


def shell_values(keys: list[str], env: dict[str, str]) -> dict[str, str]:
    """What the settings are in the environment of a script that sources load-settings.sh (compose.sh does)."""
    script = 'source cluster/load-settings.sh && for key in "$@"; do printf "%s=%s\\n" "$key" "${!key-}"; done'
    out = run(["bash", "-c", script, "settings", *keys], env=env).stdout
    return dict(line.split("=", 1) for line in out.splitlines())


def test_shell_and_python_resolve_the_same_values_by_one_rule(profile):
    env = {"PROFILE": profile, "NODE2_WEIGHT": "9"}
    resolved = cluster_settings(env)
    assert resolved == shell_values(sorted(resolved), env)
    assert resolved["TOMCAT_MAX_THREADS"] == "7"  # the profile over tomcat-conf/tunables.env (200)
    assert resolved["NODE2_WEIGHT"] == "9"  # the environment over the profile (4)
    assert resolved["TOMCAT_PROTOCOL"] == "nio" and resolved["NODE1_CPUS"] == "0.5"  # each file where alone
    assert not any(key.startswith("STATS_") for key in resolved)  # never the credentials


def test_a_bad_value_is_refused_with_the_shells_own_words():
    with pytest.raises(SettingsRefused) as refused:
        cluster_settings({"NODE3_GC": "cms", "TOMCAT_ACCEPT_COUNT": "0"})
    assert str(refused.value).splitlines() == [  # every problem at once, each on its line
        "NODE3_GC='cms' is not allowed: use one of auto serial parallel g1 zgc",
        "TOMCAT_ACCEPT_COUNT='0' is not allowed: use an integer from 1 to 65535"]
