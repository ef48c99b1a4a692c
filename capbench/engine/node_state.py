"""The nodes' state before each search (STATE_BETWEEN): an application's sessions, caches and heap grow with every
request, so a search that starts where the one before it ended measures that search's leftovers too. expire ends
every HTTP session of every application on the target's nodes (Tomcat's Manager, through the Grinder's /state on
each node's loopback) just before the search; restart re-creates the nodes (a fresh JVM) before the target's
warm-up; carry leaves them as they are and only records what they hold. Each search records what its nodes held
when it started (`state_before`) and when it ended (`state_after`), each with the live heap a full collection left
then (the memory capacity's two exact points, capbench/analysis/memory_capacity.py), and the applications' session timeout
(docs/guides/stateful.md)."""
from __future__ import annotations

from typing import Callable

from capbench.engine.progress import say
from capbench.hosts import jvm
from capbench.hosts.backend import ClusterError


def before_warmup(mode: str, target: str, nodes: tuple[str, ...], recreate: Callable[[tuple[str, ...]], None]) -> None:
    """restart: the target's nodes re-created, so the warm-up that follows warms a fresh JVM."""
    if mode != "restart":
        return
    say(f"state: re-creating {', '.join(nodes)} before {target}'s search (STATE_BETWEEN=restart)")
    recreate(nodes)


def before_search(mode: str, label: str, nodes: tuple[str, ...]) -> dict:
    """expire: every session on the nodes ended now; every mode: what they hold now, per node, and their live
    heap. A node whose sessions cannot be read is recorded with why (a restart or carry still runs the search)."""
    state: dict = {"mode": mode, "nodes": {}}
    for node in nodes:
        try:
            held = jvm.sessions(node, expire=mode == "expire", collect=True)
        except jvm.NoGrinder as missing:
            # Nothing on the node can end its sessions: the search runs, and says it starts with what they hold.
            state["nodes"][node] = {"unread": str(missing)}
            continue
        except (ClusterError, ValueError) as problem:
            if mode == "expire":
                raise
            state["nodes"][node] = {"unread": str(problem)}
            continue
        state["nodes"][node] = {"active": held.get("active"), "expired": held.get("expired"),
                                **live_heap(held), "contexts": contexts(held)}
    if mode == "expire" and any("unread" in s for s in state["nodes"].values()):
        say(f"warning: {label}'s search starts with the sessions its nodes hold: STATE_BETWEEN=expire ends them "
            "through the Grinder, which nodes running an executable JAR do not have (STATE_BETWEEN=restart starts "
            "it on fresh JVMs)")
    elif mode == "expire":
        ended = {node: s["expired"] for node, s in state["nodes"].items()}
        if any(ended.values()):
            say(f"state: {label}'s search starts with no sessions: ended "
                + ", ".join(f"{n} on {node}" for node, n in ended.items()))
    return state


def after_search(nodes: tuple[str, ...]) -> dict:
    """What the nodes hold when their search has ended, and their live heap; a node that does not answer (it
    died in the search) is recorded with why."""
    state: dict = {"nodes": {}}
    for node in nodes:
        try:
            held = jvm.sessions(node, collect=True)
        except (ClusterError, ValueError) as problem:
            state["nodes"][node] = {"unread": str(problem)}
            continue
        state["nodes"][node] = {"active": held.get("active"), **live_heap(held)}
    return state


def live_heap(held: dict) -> dict:
    """The live heap /state's full collection left (MB), or why there is none (a JVM that ignores System.gc())."""
    if held.get("heap_live_mb") is not None:
        return {"heap_live_mb": held["heap_live_mb"]}
    return {"heap_live_why_not": held.get("heap_live_why_not") or "/state gave no live heap"}


def contexts(held: dict) -> dict[str, dict]:
    """Per application (its context path, "/" for ROOT): sessions active, expired, and their timeout (s), from
    /state's answer ("<context>.active", "<context>.timeout_s", "<context>.expired")."""
    found: dict[str, dict] = {}
    for key, value in held.items():
        context, dot, field = key.rpartition(".")
        if dot and context and field in ("active", "expired", "timeout_s"):
            found.setdefault(context, {})[field] = value
    return found
