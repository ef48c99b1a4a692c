"""Sessions lost, from the balancer's request log (capbench/hosts/haproxy_log.py): /session answers whether the node found
the user's session (X-Session: found) or started one (new), and HAProxy logs it beside the user and the node. A
user whose request found no session after an earlier request of theirs had one has lost it: their node died,
the balancer moved them (no stickiness), or nothing replicated it to where they went.

Exact for what the log holds: every answered /session request of the window, in the order HAProxy received them.
A user's first request in the window starts their session and loses nothing, so a window should begin with the
users' sessions made (the bench's warm-up) or its figures count from there."""
from __future__ import annotations

from collections import Counter

from capbench.hosts.haproxy_log import Request


def _answered(requests: list[Request]):
    """Each answered /session request in the order HAProxy received them, with the node that held the user's
    session before it (None: the user's first). A user has a session once an answer carrying it came back: a
    request sent while the user's first was still unanswered could not carry its cookie, and a "new" then loses
    nothing (in CI a new user's two first requests, 140 ms apart, went to node2 and node1 before the first
    answer)."""
    answers: dict[str, list[tuple[float, str]]] = {}  # user → (when each answer came back, from which node)
    for request in sorted(requests, key=lambda r: r.received):
        if request.status != 200 or request.user is None or request.session not in ("found", "new"):
            continue
        back = [answer for answer in answers.get(request.user, ()) if answer[0] <= request.received]
        yield request, max(back)[1] if back else None
        answers.setdefault(request.user, []).append((request.end, request.server))


def lost_between(requests: list[Request], start: float, end: float) -> list[Request]:
    """The requests received in [start, end) that found no session their user had had."""
    return [r for r, before in _answered(requests)
            if start <= r.received < end and r.session == "new" and before is not None]


def sessions_lost(requests: list[Request], since: float | None = None) -> dict:
    """The window's session figures; `since`: count losses only from then on (e.g. a fault), the requests
    before it still telling which users had a session where."""
    lost_from: Counter = Counter()
    lost_users: set[str] = set()
    users: set[str] = set()
    answered = lost = moved = 0
    for request, before in _answered(requests):
        users.add(request.user)
        if since is not None and request.received < since:
            continue
        answered += 1
        if before is not None and before != request.server:
            moved += 1
        if request.session == "new" and before is not None:
            lost += 1
            lost_users.add(request.user)
            lost_from[before] += 1
    return {"answered": answered, "users": len(users), "lost": lost, "users_lost": len(lost_users),
            "lost_pct": round(100 * lost / answered, 2) if answered else None,
            "moved": moved, "lost_from_node": dict(sorted(lost_from.items()))}


def describe(figures: dict) -> str:
    """One line: "12 of 1500 answered requests found no session their user had had (0.8 %; 12 users; held by
    node2: 12); 30 moved to another node"."""
    if not figures["answered"]:
        return "no /session request was answered"
    held = ", ".join(f"{node}: {n}" for node, n in figures["lost_from_node"].items())
    return (f"{figures['lost']} of {figures['answered']} answered requests found no session their user had had "
            f"({figures['lost_pct']:g} %; {figures['users_lost']} users{'; held by ' + held if held else ''}); "
            f"{figures['moved']} moved to another node")
