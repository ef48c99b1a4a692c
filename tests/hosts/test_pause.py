"""A freeze on Compose (hosts/compose.py): `compose pause` again when runc could not freeze every process in
time, the half-frozen container thawed first; any other refusal is said at once. Docker's answers are given
here, as runc printed one in CI: the real pause is tested by integration/test_faults.py's freeze."""
from __future__ import annotations

import pytest

from hosts import compose
from hosts.backend import ClusterError

UNABLE = ("compose pause node2 exited 1: Error response from daemon: Cannot pause container af65: OCI runtime "
          "pause failed: unable to freeze: unknown")


def answering(monkeypatch, answers: list[str | None]) -> list[tuple[str, ...]]:
    """compose() answers the pauses in turn (None: done; a text: refused with it); the calls it got."""
    calls = []

    def fake(*args, timeout=120, check=True, **_):
        calls.append(args)
        if args[0] == "pause":
            answer = answers.pop(0)
            if answer is not None:
                raise ClusterError(answer)
    monkeypatch.setattr(compose, "compose", fake)
    monkeypatch.setattr(compose.time, "sleep", lambda s: None)
    return calls


def test_a_pause_the_kernel_could_not_finish_is_thawed_and_tried_again(monkeypatch):
    calls = answering(monkeypatch, [UNABLE, None])
    compose.Compose._paused("node2")
    assert calls == [("pause", "node2"), ("unpause", "node2"), ("pause", "node2")]


def test_a_pause_refused_otherwise_or_every_time_is_said(monkeypatch):
    calls = answering(monkeypatch, ["compose pause node2 exited 1: No such container"])
    with pytest.raises(ClusterError, match="No such container"):
        compose.Compose._paused("node2")
    assert calls == [("pause", "node2")]
    calls = answering(monkeypatch, [UNABLE] * compose.PAUSE_ATTEMPTS)
    with pytest.raises(ClusterError, match="unable to freeze"):
        compose.Compose._paused("node2")
    assert [c[0] for c in calls] == ["pause", "unpause", "pause", "unpause", "pause"]
