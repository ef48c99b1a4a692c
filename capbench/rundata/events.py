"""summary.json's `events`: what a run lost, one record each (capbench/engine/losses.py writes them), and the words every
reader uses for one: the console, the report's banner, a figure's "not measured", the history and the gate."""
from __future__ import annotations

import time

MACHINE_LOST = "machine lost"
HOST_DOWN = "host down"


def clock(epoch: float) -> str:
    return time.strftime("%H:%M:%S", time.localtime(epoch))


def short(event: dict, found: bool = False) -> str:
    """"node2's machine lab3 was lost at 14:02:11", or "node2 went down at 14:02:11"; `found`: as the harness
    found it, before the run's end dates it by HAProxy's first DOWN ("… found lost at 14:02:41")."""
    hosts, at = ", ".join(event["hosts"]), clock(event["epoch"])
    if event["what"] == MACHINE_LOST:
        return f"{hosts}'s machine {event['machine']} {'found' if found else 'was'} lost at {at}"
    return f"{hosts} {'found down' if found else 'went down'} at {at}"


def sentence(event: dict, found: bool = False) -> str:
    """The event with every role its machine ran and how it was seen."""
    if event["what"] == MACHINE_LOST:
        return f"{short(event, found)} (it ran {', '.join(event['roles'])}; {event['seen']})"
    return f"{short(event, found)} ({event['seen']}; its machine still answers)"


def touching(events: list[dict] | None, hosts) -> list[dict]:
    """The events that took any of `hosts`: seen gone, or on a lost machine that ran it."""
    wanted = set(hosts)
    return [e for e in events or [] if wanted & set(e["roles"] if e["what"] == MACHINE_LOST else e["hosts"])]
