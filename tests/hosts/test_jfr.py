"""capbench/hosts/jfr.py's commands to a node's JVM: a recording that could not be written is stopped all the same."""
from __future__ import annotations

import subprocess

import pytest

from capbench.hosts import jfr
from capbench.hosts.backend import ClusterError


class RefusingDump:
    """A node whose JVM refuses JFR.dump (as a full disk would make it) and accepts the rest."""

    def __init__(self):
        self.sent: list[str] = []

    def exec(self, node, argv, check=True, timeout=None):
        command = argv[3] if argv[0] == "jattach" else " ".join(argv)
        self.sent.append(command.split()[0])
        refused = command.startswith("JFR.dump")
        return subprocess.CompletedProcess(argv, 1 if refused else 0, b"No space left on device" if refused else b"",
                                           b"")


def test_a_recording_whose_dump_failed_is_still_stopped(monkeypatch):
    node = RefusingDump()
    monkeypatch.setattr(jfr, "backend", lambda: node)
    with pytest.raises(ClusterError, match="node1: jcmd JFR.dump failed: No space left on device"):
        jfr.stop("node1", "7", "capbench-step-12")
    assert node.sent == ["JFR.dump", "JFR.stop"]
