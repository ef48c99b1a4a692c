"""What HAProxy saw, from its two in-memory logs (haproxy/haproxy.cfg's rings, read through the runtime API):
`events`, always on, its state changes (a node DOWN, UP, in maintenance) with microsecond timestamps; and
`requests`, on only while a bench asks for it (LB_LOG_REQUESTS=1: bench-failover and bench-stress), one line a
request in our own format: when it was accepted, which node served it, the status, how it ended, its timers.
From these: when HAProxy noticed a node's fault, which requests failed and how, per-second series."""
from __future__ import annotations

import math
import re
from dataclasses import dataclass
from datetime import datetime

from capbench.hosts import haproxy
from capbench.rundata.records import SLOW_MS

EVENTS_RING = "events"
REQUESTS_RING = "requests"

# haproxy.cfg's log-format for the requests ring:
# "capbench-req %Ts.%ms %Th %Ti %s %ST %tsc %Tw %Tc %Tr %Ta %rc <user> <X-Session>" (the last two "-" when absent;
# lines from before they were logged lack them).
_REQUEST = re.compile(r"capbench-req (?P<accept>\d+\.\d{3}) (?P<th>-?\d+) (?P<ti>-?\d+) (?P<server>\S+) "
                      r"(?P<status>-?\d+) (?P<term>\S{4}) (?P<tw>-?\d+) (?P<tc>-?\d+) (?P<tr>-?\d+) (?P<ta>-?\d+) "
                      r"(?P<retries>\+?\d+)(?: (?P<user>\S+) (?P<session>\S+))?")
# A server found again by DNS (a Swarm task replaced) is named twice: "Server nodes/node1 ('node1') is UP/READY".
_STATE = re.compile(r"Server (?P<backend>[\w-]+)/(?P<server>[\w-]+) (?:\('[^']*'\) )?"
                    r"(?P<what>is DOWN,|is UP,|is UP/READY|is going DOWN for maintenance|"
                    r"was DOWN and now enters maintenance|.*leaving .*maintenance)")
_STATES = {"is DOWN,": "DOWN", "is UP,": "UP", "is UP/READY": "READY", "is going DOWN for maintenance": "MAINT",
           "was DOWN and now enters maintenance": "MAINT"}

# The first letter of HAProxy's termination state: who ended the session, when it was not normal.
ENDED_BY = {"C": "client aborted", "S": "server aborted or refused", "P": "proxy refused (limits, no server)",
            "R": "resource exhausted", "I": "internal error", "D": "session killed (server marked down)",
            "K": "killed by an admin", "c": "client timeout", "s": "server timeout"}
# The second: the phase the session was in.
PHASE = {"R": "waiting for the request", "Q": "queued", "C": "connecting to the server",
         "H": "waiting for the response headers", "D": "receiving the response", "L": "sending the last bytes",
         "T": "tarpitted"}


@dataclass(frozen=True)
class Request:
    # Epoch seconds (the lb's clock) when the request's first byte arrived. Not HAProxy's %Ts alone: on a
    # kept-alive connection that is when the previous request ended, which the idle time (%Ti) separates from
    # this one; with many connections at a low rate, seconds (it put node1's first answers after a restart
    # 3 s before HAProxy marked it UP).
    received: float
    server: str  # node1..3, or <NOSRV> when none took it
    status: int  # -1: no response
    termination: str  # e.g. "----" (normal), "SH--" (the node closed before answering)
    total_ms: int  # Ta: from the request's first byte to the last byte of the answer (or the session's end)
    retries: int
    redispatched: bool
    user: str | None = None  # the user id of the query string
    session: str | None = None  # /session's answer: "found" (the node had the user's session) or "new"

    @property
    def end(self) -> float:
        return self.received + max(self.total_ms, 0) / 1000

    @property
    def failed(self) -> bool:
        """As the study and the SLO count it: an error status, a session ended abnormally, or an answer
        slower than 5 s."""
        return (self.status < 200 or self.status >= 400 or self.termination[:2] != "--"
                or self.total_ms > SLOW_MS)

    @property
    def kind(self) -> str:
        """How it failed, in words: the status, who ended it in which phase when HAProxy says so, slowness."""
        if not self.failed:
            return "ok"
        parts = [f"HTTP {self.status}" if self.status > 0 else "no response"]
        if self.termination[:2] != "--":
            ended, phase = self.termination[0], self.termination[1]
            parts.append(f"{ENDED_BY.get(ended, ended)} while {PHASE.get(phase, phase)}".strip())
        if self.total_ms > SLOW_MS:
            parts.append(f"slower than {SLOW_MS / 1000:g} s")
        return ", ".join(parts)


@dataclass(frozen=True)
class StateChange:
    at: float  # epoch seconds (the lb's clock)
    server: str
    state: str  # DOWN, UP, MAINT, READY
    text: str


def _epoch(iso: str) -> float:
    return datetime.fromisoformat(iso).timestamp()


def parse_requests(text: str) -> list[Request]:
    out = []
    for match in map(_REQUEST.search, text.splitlines()):
        if match:
            retries = match["retries"]
            received = float(match["accept"]) + (max(int(match["th"]), 0) + max(int(match["ti"]), 0)) / 1000
            out.append(Request(received, match["server"], int(match["status"]), match["term"],
                               int(match["ta"]), int(retries.lstrip("+")), retries.startswith("+"),
                               _given(match["user"]), _given(match["session"])))
    return sorted(out, key=lambda r: r.received)


def _given(field: str | None) -> str | None:
    return None if field in (None, "-", "") else field


def parse_events(text: str) -> list[StateChange]:
    """The ring's lines are "<ISO time> <message>"; the servers' state changes among them."""
    out = []
    for line in text.splitlines():
        stamp, _, message = line.partition(" ")
        match = _STATE.search(message)
        if not match:
            continue
        state = _STATES.get(match["what"], "READY")
        try:
            out.append(StateChange(_epoch(stamp), match["server"], state, message.strip()))
        except ValueError:
            continue
    return out


def read_ring(ring: str) -> str:
    return haproxy.api(f"show events {ring}")


def state_changes(since: float = 0.0) -> list[StateChange]:
    return [change for change in parse_events(read_ring(EVENTS_RING)) if change.at >= since]


def p99(times_ms: list[int]) -> int | None:
    """The 99th percentile (nearest rank) of HAProxy's times, or None when there are none."""
    ranked = sorted(times_ms)
    return ranked[min(len(ranked) - 1, math.ceil(0.99 * len(ranked)) - 1)] if ranked else None


def per_second(requests: list[Request], start: float, end: float) -> list[dict]:
    """Second by second from `start` (by when each request ended): answered by each node, failed, and the
    99th percentile of HAProxy's total time of the answered ones."""
    seconds = max(int(math.ceil(end - start)), 0)
    rows = [{"t": t, "ok": 0, "failed": 0, "by_server": {}, "ta": []} for t in range(seconds)]
    for request in requests:
        t = int(request.end - start)
        if not 0 <= t < seconds:
            continue
        row = rows[t]
        if request.failed:
            row["failed"] += 1
        else:
            row["ok"] += 1
            row["by_server"][request.server] = row["by_server"].get(request.server, 0) + 1
            row["ta"].append(request.total_ms)
    for row in rows:
        row["p99_ms"] = p99(row.pop("ta"))
    return rows
