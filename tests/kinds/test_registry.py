"""The bench kinds' one table: every kind by its name, each with a description for make help, and a second kind
of a name already taken refused (it would silently hide the first)."""
from __future__ import annotations

import subprocess

import pytest

from capbench.kinds import KINDS, MODULES, _table
from conftest import ROOT

PARTS = ("_findings", "_shown")  # a kind's module split: what it finds, how it shows it


def test_every_kind_is_registered_once_with_its_targets_and_description():
    # Every module of kinds/ is a kind in the table (a new one is its module and its registry line), in make help's
    # order, but for a kind's parts (cluster_findings.py, cluster_shown.py); the benches the docs and the tests name
    # are among them.
    modules = {f"capbench.kinds.{p.stem}" for p in (ROOT / "capbench" / "kinds").glob("*.py")
               if not p.stem.startswith("_") and not p.stem.endswith(PARTS)}
    assert set(MODULES) == modules and len(MODULES) == len(KINDS)
    assert {"single", "cluster", "selfcheck", "overhead", "usl", "variants", "failover", "stress", "scaleout",
            "sessions", "duet"} <= set(KINDS)
    for kind in KINDS.values():
        assert kind.description and kind.targets, kind.name


def test_a_second_kind_of_a_taken_name_is_refused():
    with pytest.raises(ValueError, match="bench kind name 'single' is empty or already taken"):
        _table(("capbench.kinds.single", "capbench.kinds.single"))


def test_make_help_lists_every_kind_with_the_standard_library_alone():
    # make help runs this with the machine's python3, before the harness's venv exists: Debian's own here.
    done = subprocess.run(["/usr/bin/python3", "-s", "-m", "capbench.kinds"], cwd=ROOT, capture_output=True, text=True,
                          env={"PATH": "/usr/bin:/bin"})
    assert done.returncode == 0, done.stderr
    assert [line.split()[1] for line in done.stdout.splitlines()] == [f"bench-{name}" for name in KINDS]
