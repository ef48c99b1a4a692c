"""A node's JVM, seen from the harness: what it runs with (the webapp's /info, or on a node without the Grinder
the metrics' agent), its pid and thread dumps."""
from __future__ import annotations

import json
import re

from capbench.hosts.backend import ClusterError, backend
from capbench.hosts.cluster_settings import grinder_path, has_grinder

EXPORTER_URL = "http://127.0.0.1:9404/metrics"  # the JMX exporter's agent in every node's JVM (java options)
# The collector family by the names its MXBeans take, as the Grinder's /info names it (InfoServlet.collectorFamily).
COLLECTOR_FAMILIES = (("G1", "G1"), ("PS ", "Parallel"), ("ZGC", "ZGC"), ("Shenandoah", "Shenandoah"),
                      ("Copy", "Serial"), ("MarkSweepCompact", "Serial"))


class NoGrinder(ClusterError):
    """A question only the Grinder answers, asked of nodes that run an executable JAR (APP_JAR) without it."""


def node_info(node: str) -> dict | None:
    """What the node's JVM actually runs with (GC in use, heap, CPUs, versions); None when it does not answer."""
    if not has_grinder():
        return exporter_info(node)
    url = f"http://127.0.0.1:8080{grinder_path()}/info"
    done = backend().exec(node, ["curl", "-fsS", "--max-time", "3", url], check=False, timeout=30)
    try:
        info = json.loads(done.stdout) if done.returncode == 0 else None
    except ValueError:
        return None
    # How this probe's own request came in (from loopback, HTTP/1.1) says nothing of the bench's: run.json's
    # node_http has that (capbench/load/node_http_facts.py).
    return {k: v for k, v in info.items() if k not in ("request_protocol", "request_secure")} if info else None


def exporter_info(node: str) -> dict | None:
    """node_info's fields the metrics' agent knows (the collectors, the heap's maximum, the Java runtime), for a
    node without the Grinder; None when it does not answer."""
    done = backend().exec(node, ["curl", "-fsS", "--max-time", "3", EXPORTER_URL], check=False, timeout=30)
    return info_from_metrics(done.stdout.decode(errors="replace")) if done.returncode == 0 else None


def info_from_metrics(text: str) -> dict:
    """The agent's exposition read for node_info's fields; a field it does not carry is None."""
    collectors = sorted(set(re.findall(r'^jvm_gc_collection_seconds_count\{gc="([^"]+)"', text, re.M)))
    heap = re.search(r'^jvm_memory_max_bytes\{area="heap"[^}]*\}\s+(\S+)', text, re.M)
    runtime = re.search(r'^jvm_runtime_info\{([^}]*)\}', text, re.M)
    labels = dict(re.findall(r'(\w+)="([^"]*)"', runtime.group(1))) if runtime else {}
    names = " ".join(collectors)
    family = next((name for mark, name in COLLECTOR_FAMILIES if mark in names), None)
    return {"gc": family, "gc_collectors": ", ".join(collectors) or None,
            "heap_max_bytes": int(float(heap.group(1))) if heap else None,
            "java_version": labels.get("version"), "jvm": labels.get("runtime"),
            "server": "an executable JAR (APP_JAR)", "source": "the JMX exporter's agent (no Grinder on the node)"}


def status_fields(info: dict) -> tuple[str, str, str]:
    """A node's collector, the CPUs its JVM sees and its usable heap in MiB, as make status shows them: "-" for
    what the node's description lacks (a JAR's node, described by the metrics' agent, has no CPU count)."""
    heap = info.get("heap_max_bytes")
    return (info.get("gc") or "-", str(info.get("available_processors") or "-"),
            f"{int(heap) // 2**20}MiB" if heap else "-")


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
    if not has_grinder():
        raise NoGrinder("the nodes run an executable JAR (APP_JAR) without the Grinder, whose /state reads and ends "
                        "Tomcat's sessions: not measured")
    asked = [query for query, wanted in (("expire=all", expire), ("gc=full", collect)) if wanted]
    url = f"http://127.0.0.1:8080{grinder_path()}/state" + ("?" + "&".join(asked) if asked else "")
    argv = ["curl", "-fsS", "--max-time", "60", *(["-X", "POST"] if asked else []), url]
    done = backend().exec(node, argv, check=False, timeout=90)
    if done.returncode != 0:
        raise ClusterError(f"{node}'s sessions could not be {'expired' if expire else 'read'} ({url}): "
                           f"{(done.stderr or done.stdout).decode(errors='replace').strip()[:200]}")
    return json.loads(done.stdout)
