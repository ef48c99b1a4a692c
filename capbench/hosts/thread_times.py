"""A node's JVM threads' CPU time and run delay as its kernel accounts them (/proc/PID/task/*/schedstat, with each
thread's name), read in one process inside the node so a small quota pays for little; capbench/profiling/thread_time.py
reads two of these as a step's thread time."""
from __future__ import annotations

import time

from capbench.hosts.backend import ClusterError, backend


def read(node: str, pid: str) -> tuple[float, str]:
    """(when it was read: time.monotonic() on this machine, the `grep -H` lines of every thread's comm and
    schedstat)."""
    if not pid.isdigit():
        raise ClusterError(f"{node}: not a pid: {pid!r}")
    done = backend().exec(node, ["sh", "-c", f'grep -H "" /proc/{pid}/task/*/comm /proc/{pid}/task/*/schedstat'],
                          check=False, timeout=30)
    when = time.monotonic()
    text = done.stdout.decode(errors="replace")
    if "schedstat:" not in text:
        raise ClusterError(f"{node}: its kernel's thread times could not be read: "
                           f"{done.stderr.decode(errors='replace').strip()[-300:] or 'no schedstat'}")
    return when, text
