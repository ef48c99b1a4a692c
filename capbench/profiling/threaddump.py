"""Lock evidence from HotSpot thread dumps (the text of `jcmd <pid> Thread.print`, `jstack` or `jattach <pid>
threaddump`, which all print the same format): what each request thread of Tomcat's pool was doing, and on
which monitor the blocked ones waited. The study did this by hand with jstack; make bench-variants samples
dumps during the step at capacity and records this summary.

A request thread (http-exec-N, the Executor of tomcat-conf/server.xml) is, in one dump:
  idle      waiting in the executor's queue for a request (TaskQueue.take/poll);
  grinding  RUNNABLE inside capbench.grinder (doing the servlet's work);
  pool      waiting for a connection from the node's database pool (inside HikariCP's getConnection: seed 004's
            threads BLOCKED in BasicDataSource.getConnection, in today's pool);
  database  inside the JDBC driver (org.postgresql): talking to the database or waiting for its answer;
  running   RUNNABLE elsewhere (reading, writing, Tomcat's own code);
  blocked   BLOCKED on a monitor ("waiting to lock <addr> (a Class)"): the class is recorded;
  waiting   WAITING/TIMED_WAITING on something other than the queue (a monitor's wait(), a park).
"""
from __future__ import annotations

import re
import statistics
from collections import Counter
from dataclasses import dataclass

from capbench.profiling.names import REQUEST_THREAD_PREFIX

_HEADER = re.compile(r'^"(?P<name>[^"]+)"')
_STATE = re.compile(r"^\s+java\.lang\.Thread\.State: (?P<state>[A-Z_]+)")
_OBJECT = r"<0x[0-9a-f]+> \(a (?P<cls>[^)]+)\)"
_BLOCKED_ON = re.compile(r"^\s+- waiting to lock " + _OBJECT)
_WAITING_ON = re.compile(r"^\s+- (?:parking to wait for|waiting on) +" + _OBJECT)
_HOLDS = re.compile(r"^\s+- locked " + _OBJECT)
_FRAME = re.compile(r"^\s+at (?P<frame>\S+)\(")
KINDS = ("idle", "grinding", "pool", "database", "running", "blocked", "waiting")
POOL_BORROW = "com.zaxxer.hikari.pool.HikariPool.getConnection"
JDBC_DRIVER = "org.postgresql."


class DumpError(ValueError):
    """The text is not a HotSpot thread dump."""


@dataclass(frozen=True)
class ThreadState:
    name: str
    state: str  # java.lang.Thread.State
    kind: str  # one of KINDS
    monitor: str | None  # the class of the monitor it is blocked on (blocked) or waits for (waiting)
    holds: tuple[str, ...]  # classes of the monitors it holds


def parse(text: str) -> list[ThreadState]:
    """Every Java thread of one dump (VM-internal threads without a Thread.State line are left out)."""
    if "Full thread dump" not in text:
        raise DumpError("no 'Full thread dump' line: not a HotSpot thread dump")
    threads = []
    for block in re.split(r"\n(?=\")", text):
        header = _HEADER.match(block)
        lines = block.splitlines()
        state = next((m.group("state") for m in map(_STATE.match, lines) if m), None)
        if header and state:
            threads.append(_classify(header.group("name"), state, lines))
    return threads


def _classify(name: str, state: str, lines: list[str]) -> ThreadState:
    frames = [m.group("frame") for m in map(_FRAME.match, lines) if m]
    holds = tuple(m.group("cls") for m in map(_HOLDS.match, lines) if m)
    blocked = next((m.group("cls") for m in map(_BLOCKED_ON.match, lines) if m), None)
    waited = next((m.group("cls") for m in map(_WAITING_ON.match, lines) if m), None)
    if any(".TaskQueue.take" in f or ".TaskQueue.poll" in f for f in frames):
        return ThreadState(name, state, "idle", None, holds)
    if state in ("WAITING", "TIMED_WAITING") and any(f.startswith(POOL_BORROW) for f in frames):
        return ThreadState(name, state, "pool", "the connection pool", holds)
    if any(f.startswith(JDBC_DRIVER) for f in frames):
        return ThreadState(name, state, "database", None, holds)
    in_grinder = any(f.startswith("capbench.grinder.") for f in frames)
    # A thread that has just entered a monitor can still read BLOCKED, with "- locked" and no "waiting to
    # lock" line (HotSpot updates the state after the dump's snapshot of the stack): it is the holder.
    if state == "BLOCKED" and (blocked or not holds):
        return ThreadState(name, state, "blocked", blocked, holds)
    if state in ("WAITING", "TIMED_WAITING"):
        return ThreadState(name, state, "waiting", waited, holds)
    return ThreadState(name, state, "grinding" if in_grinder else "running", None, holds)


def summarize(dumps: list[str], prefix: str = REQUEST_THREAD_PREFIX) -> dict:
    """Means over the dumps of the request threads in each kind, and of the blocked ones per monitor class;
    dumps that cannot be read are counted, not fatal."""
    per_dump: list[list[ThreadState]] = []
    unreadable = 0
    for text in dumps:
        try:
            per_dump.append([t for t in parse(text) if t.name.startswith(prefix)])
        except DumpError:
            unreadable += 1
    if not per_dump:
        return {"dumps": 0, "unreadable": unreadable, "request_threads": None, "mean_by_kind": {}, "blocked_on": {},
                "waiting_on": {}, "holding": {}}
    kinds = {k: round(statistics.mean(sum(t.kind == k for t in d) for d in per_dump), 2) for k in KINDS}
    monitors: Counter[str] = Counter()
    waits: Counter[str] = Counter()
    holders: Counter[str] = Counter()
    for threads in per_dump:
        monitors.update(t.monitor for t in threads if t.kind == "blocked" and t.monitor)
        waits.update(t.monitor for t in threads if t.kind == "waiting" and t.monitor)
        holders.update(cls for t in threads for cls in t.holds)
    n = len(per_dump)
    return {"dumps": n, "unreadable": unreadable,
            "request_threads": round(statistics.mean(len(d) for d in per_dump), 2),
            "mean_by_kind": kinds,
            "blocked_on": {cls: round(count / n, 2) for cls, count in monitors.most_common()},
            "waiting_on": {cls: round(count / n, 2) for cls, count in waits.most_common()},
            "holding": {cls: round(count / n, 2) for cls, count in holders.most_common()}}


def describe(summary: dict) -> str:
    """One line: 'of 12.0 request threads: 1.0 grinding, 10.5 blocked on X, ...' (mean over n dumps)."""
    if not summary["dumps"]:
        return "no thread dump could be read"
    kinds = summary["mean_by_kind"]
    names = {"pool": "waiting for a pooled connection", "database": "in the database"}
    parts = [f"{kinds.get(k, 0):g} {names.get(k, k)}" for k in ("grinding", "pool", "database", "running", "idle")
             if kinds.get(k)]
    parts += [f"{count:g} blocked on {cls}" for cls, count in summary["blocked_on"].items()]
    parts += [f"{count:g} waiting on {cls}" for cls, count in summary["waiting_on"].items()]
    return (f"of {summary['request_threads']:g} request threads: " + (", ".join(parts) or "none busy")
            + f" (mean of {summary['dumps']} dumps)")
