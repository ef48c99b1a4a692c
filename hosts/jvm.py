"""A node's JVM, seen from the harness: what it runs with (the webapp's /info), its pid and thread dumps."""
from __future__ import annotations

import json

from hosts.backend import ClusterError, backend
from hosts.cluster_settings import grinder_path


def node_info(node: str) -> dict | None:
    """What the node's JVM actually runs with (GC in use, heap, CPUs, versions); None when it does not answer."""
    url = f"http://127.0.0.1:8080{grinder_path()}/info"
    done = backend().exec(node, ["curl", "-fsS", "--max-time", "3", url], check=False, timeout=30)
    try:
        return json.loads(done.stdout) if done.returncode == 0 else None
    except ValueError:
        return None


def java_pid(node: str) -> str:
    """The pid of the node's JVM on its host (the one process whose executable is java)."""
    script = 'for d in /proc/[0-9]*; do case "$(readlink "$d/exe" 2>/dev/null)" in */java) echo "${d#/proc/}"; ' \
             'exit 0;; esac; done; exit 1'
    done = backend().exec(node, ["sh", "-c", script], check=False, timeout=30)
    pid = done.stdout.decode().strip()
    if done.returncode != 0 or not pid.isdigit():
        raise ClusterError(f"no java process found on {node}")
    return pid


def thread_dump(node: str, pid: str) -> str:
    """One thread dump of the node's JVM (jattach, the JVM's attach API: what jcmd Thread.print prints)."""
    return backend().exec(node, ["jattach", pid, "threaddump"], timeout=30).stdout.decode(errors="replace")


def sessions(node: str, expire: bool = False, collect: bool = False) -> dict:
    """The HTTP sessions each application on the node's Tomcat holds and their timeout (the Grinder's /state, from
    Tomcat's Manager MBeans, asked on the node's loopback: nothing else may); expire: every one of them ended
    first; collect: a full collection after that, and the live heap it left ("heap_live_mb", or why not in
    "heap_live_why_not"). {"contexts", "active", "expired", "<context>.active", "<context>.timeout_s", ...}."""
    asked = [query for query, wanted in (("expire=all", expire), ("gc=full", collect)) if wanted]
    url = f"http://127.0.0.1:8080{grinder_path()}/state" + ("?" + "&".join(asked) if asked else "")
    argv = ["curl", "-fsS", "--max-time", "60", *(["-X", "POST"] if asked else []), url]
    done = backend().exec(node, argv, check=False, timeout=90)
    if done.returncode != 0:
        raise ClusterError(f"{node}'s sessions could not be {'expired' if expire else 'read'} ({url}): "
                           f"{(done.stderr or done.stdout).decode(errors='replace').strip()[:200]}")
    return json.loads(done.stdout)
