"""A freeze (capbench/hosts/backend.py's paused, which Compose and the swarm use): the pause again when runc could not
freeze every process in time, the half-frozen container thawed first; any other refusal is said at once.
Docker's answers are given here, as runc printed one in CI: the real pause is tested by integration/
test_faults.py's freeze."""
from __future__ import annotations

import pytest

from capbench.hosts import backend
from capbench.hosts.backend import ClusterError

UNABLE = ("compose pause node2 exited 1: Error response from daemon: Cannot pause container af65: OCI runtime "
          "pause failed: unable to freeze: unknown")


def answering(monkeypatch, answers: list[str | None]) -> tuple[list[str], dict]:
    """A pause that answers in turn (None: done; a text: refused with it), an unpause; the calls they got."""
    calls = []

    def pause():
        calls.append("pause")
        answer = answers.pop(0)
        if answer is not None:
            raise ClusterError(answer)
    monkeypatch.setattr(backend.time, "sleep", lambda s: None)
    return calls, {"pause": pause, "unpause": lambda: calls.append("unpause")}


def test_a_pause_the_kernel_could_not_finish_is_thawed_and_tried_again(monkeypatch):
    calls, docker = answering(monkeypatch, [UNABLE, None])
    backend.paused(**docker)
    assert calls == ["pause", "unpause", "pause"]


def test_a_pause_refused_otherwise_or_every_time_is_said(monkeypatch):
    calls, docker = answering(monkeypatch, ["compose pause node2 exited 1: No such container"])
    with pytest.raises(ClusterError, match="No such container"):
        backend.paused(**docker)
    assert calls == ["pause"]
    calls, docker = answering(monkeypatch, [UNABLE] * backend.PAUSE_ATTEMPTS)
    with pytest.raises(ClusterError, match="unable to freeze"):
        backend.paused(**docker)
    assert calls == ["pause", "unpause", "pause", "unpause", "pause"]
