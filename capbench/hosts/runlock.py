"""One bench at a time on one cluster: a second bench would change the rotation, the weights or the settings
under the first one's feet and both would measure a mix. The lock is an exclusive flock on a file per cluster
(its Compose project or its Vagrant VM prefix) that the kernel releases when the holder exits, however it
ends, so a killed bench never leaves a stale lock behind. The file says who holds it, for the refusal."""
from __future__ import annotations

import fcntl
import json
import os
import time
from pathlib import Path

from capbench.hosts.backend import backend
from capbench.hosts.topology import ROOT


class Busy(RuntimeError):
    """Another bench holds the cluster."""


def lock_path(cluster_id: str) -> Path:
    return ROOT / ".capbench" / f"bench-{cluster_id}.lock"


def acquire(what: str, cluster_id: str | None = None):
    """Takes the cluster's lock for this process's lifetime (keep the returned file open), or raises Busy
    naming the bench that holds it. The cluster: the backend's own name for it, unless given."""
    cluster_id = cluster_id or backend().lock_id()
    path = lock_path(cluster_id)
    path.parent.mkdir(parents=True, exist_ok=True)
    handle = path.open("a+")
    try:
        fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        handle.seek(0)
        try:
            holder = json.loads(handle.read() or "{}")
        except ValueError:
            holder = {}
        handle.close()
        since = time.strftime("%H:%M:%S", time.localtime(holder["since"])) if "since" in holder else "?"
        raise Busy(f"another bench is running on this cluster ({cluster_id}): {holder.get('what', '?')}, "
                   f"pid {holder.get('pid', '?')}, since {since}; wait for it to end or stop it "
                   f"(Ctrl-C, or kill {holder.get('pid', 'its pid')}); nothing was started") from None
    handle.seek(0)
    handle.truncate()
    handle.write(json.dumps({"pid": os.getpid(), "what": what, "since": time.time()}) + "\n")
    handle.flush()
    return handle
