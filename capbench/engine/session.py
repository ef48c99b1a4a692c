"""One bench session, the same for make bench-KIND, make tune and make gate: the cluster's one-bench lock taken
(or the bench refused), the --check-only exit, the cluster-up check, SIGTERM ending the session as Ctrl-C does,
then what the command measures; each run executed (capbench/engine/runner.py) and its console tables printed."""
from __future__ import annotations

import signal
import sys
from collections.abc import Callable
from typing import TypeVar

from capbench.engine import console
from capbench.engine.runner import Bench, execute
from capbench.hosts import runlock
from capbench.hosts.backend import backend

T = TypeVar("T")


def refuse(problem: Exception) -> int:
    """Bad input: each problem on a line of its own, before anything starts; exit status 2."""
    for line in str(problem).splitlines():
        print(f"capbench: {line}", file=sys.stderr)
    return 2


def cluster_not_up() -> bool:
    down = backend().unhealthy()
    if down:
        print(f"capbench: the cluster is not up ({', '.join(down)} not running and healthy): run make up first",
              file=sys.stderr)
    return bool(down)


def interrupt(signum, frame) -> None:
    """SIGTERM ends a run as Ctrl-C does: completed steps kept, marked partial."""
    raise KeyboardInterrupt


def in_session(command: str, check_only: bool, body: Callable[[], tuple[int, T]],
               refusal: Callable[[], str] | None = None) -> tuple[int, T | None]:
    """`body` (its exit status and what it made) under the cluster's lock, once the cluster is up and `refusal`
    (what only the running cluster can tell) says nothing against it; with check_only the lock is only tried.
    Exit status 2, and nothing made, when refused."""
    try:
        # Held until this process exits. --check-only (make's first call, before make up) takes it too and
        # lets it go: a running bench's cluster is not changed under it by the next one's `up`.
        lock = runlock.acquire(command)
    except runlock.Busy as busy:
        return refuse(busy), None
    if check_only:
        return 0, None
    if cluster_not_up():
        return 2, None
    why = refusal() if refusal is not None else ""
    if why:
        return refuse(ValueError(why)), None
    signal.signal(signal.SIGTERM, interrupt)
    code, made = body()
    lock.close()
    return code, made


def measured(bench: Bench, body: Callable[[], object] | None = None, extra: dict | None = None) -> tuple[dict, int]:
    """The run executed (the kind's run(), or `body`), `extra` added to its summary, and its console tables."""
    summary, code = execute(bench, body, extra)
    console.finish(bench.kind, bench.paths, summary)
    return summary, code
