"""Faults done to a node, on either backend, and undone; each says when it took effect.

kill:   the node dies at once: SIGKILL to every process of its container (docker kill) or of its service
        (systemd), which is then held down (Docker does not restart it; on a VM the service is stopped so
        systemd's Restart= does not bring it back early).
freeze: every process of the node stops where it is (docker pause: the cgroup freezer; SIGSTOP on a VM), as in
        a very long GC pause: its sockets stay open and the kernel still accepts connections for it.
Recovery starts it again (docker start / systemctl start) or thaws it (docker unpause / SIGCONT).

When: the command line that does it takes most of a second to start (docker compose, ssh), so the time is
read afterwards from what did it: Docker's events (nanoseconds) on Compose; on a VM, systemd's timestamp of
the JVM's exit for a kill, else the middle of the call (± half its length, said in `uncertainty_s`)."""
from __future__ import annotations

import subprocess
import time
from dataclasses import dataclass
from datetime import datetime, timezone

from load import loadhost

UNIT = "capbench-node.service"  # cluster/vagrant/units/capbench-node.service
# The Docker event that marks each action taking effect.
DOCKER_EVENT = {("kill", "inject"): "kill", ("freeze", "inject"): "pause", ("kill", "recover"): "start",
                ("freeze", "recover"): "unpause"}


@dataclass(frozen=True)
class Done:
    at: float  # epoch seconds, on the harness's clock (one clock with the containers')
    uncertainty_s: float
    source: str


def _systemctl(node: str, *args: str) -> str:
    return loadhost.host_exec(node, ["systemctl", *args, UNIT], user="root", timeout=60).stdout.decode()


def _docker_event(node: str, action: str, since: float) -> float | None:
    container = loadhost.compose("ps", "--quiet", node, timeout=60).stdout.decode().strip()
    done = subprocess.run(["docker", "events", "--since", f"{since - 1:.3f}", "--until", f"{time.time() + 1:.3f}",
                           "--filter", f"container={container}", "--filter", f"event={action}",
                           "--format", "{{.TimeNano}}"], capture_output=True, text=True, timeout=60)
    times = [int(line) / 1e9 for line in done.stdout.split() if line.isdigit()]
    return min((t for t in times if t >= since - 1), default=None)


def _vm_exit_time(node: str) -> float | None:
    """systemd's record of the JVM's exit, to the microsecond (the VM's clock)."""
    text = _systemctl(node, "show", "--property=ExecMainExitTimestamp", "--timestamp=us+utc")
    value = text.strip().partition("=")[2]  # e.g. "Mon 2026-11-23 06:50:01.123456 UTC"
    try:
        return datetime.strptime(value, "%a %Y-%m-%d %H:%M:%S.%f UTC").replace(tzinfo=timezone.utc).timestamp()
    except ValueError:
        return None


def _act(node: str, fault: str, step: str) -> Done:
    before = time.time()
    if loadhost.backend() == "vagrant":
        if (fault, step) == ("kill", "inject"):
            _systemctl(node, "kill", "--signal=SIGKILL")
            _systemctl(node, "stop")  # cancels the restart systemd would make 2 s later
        elif (fault, step) == ("kill", "recover"):
            _systemctl(node, "start", "--no-block")
        else:
            _systemctl(node, "kill", f"--signal={'SIGSTOP' if step == 'inject' else 'SIGCONT'}")
        after = time.time()
        exited = _vm_exit_time(node) if (fault, step) == ("kill", "inject") else None
        if exited is not None and before - 1 <= exited <= after + 1:
            return Done(exited, 0.0, "systemd's exit timestamp of the JVM (the VM's clock)")
        return Done((before + after) / 2, round((after - before) / 2, 3), "the middle of the ssh call")
    action = DOCKER_EVENT[(fault, step)]
    if action == "kill":
        loadhost.compose("kill", "--signal", "SIGKILL", node, timeout=60)
    else:
        loadhost.compose(action, node, timeout=120)
    after = time.time()
    at = _docker_event(node, action, before)
    if at is not None:
        return Done(at, 0.0, f"Docker's {action} event")
    return Done((before + after) / 2, round((after - before) / 2, 3), "the middle of the docker call")


def inject(node: str, fault: str) -> Done:
    return _act(node, fault, "inject")


def recover(node: str, fault: str) -> Done:
    return _act(node, fault, "recover")
