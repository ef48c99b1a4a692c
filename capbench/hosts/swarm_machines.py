"""Whether a machine of the swarm is lost, asked two ways: its own Docker engine (the hosts file's address for it)
and the manager's view of the swarm node (`docker node inspect`: ready, down, unknown). Either one failing is a
lost machine: an engine that stopped answering is lost at once, before the manager's heartbeats call it down; a
machine the manager lists down is cut off from the swarm even where this machine still reaches its engine."""
from __future__ import annotations

import subprocess

from capbench.hosts.backend import LostMachine
from capbench.hosts.swarm_hosts import Machine, SwarmHosts

ANSWER_WAIT_S = 15  # an engine over SSH on a lost machine hangs until this, a local socket refuses at once


def _docker(engine: str, *args: str) -> tuple[bool, str]:
    """(answered, what it said or why not)."""
    try:
        done = subprocess.run(["docker", "--host", engine, *args], capture_output=True, text=True,
                              timeout=ANSWER_WAIT_S, stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        return False, f"no answer within {ANSWER_WAIT_S} s"
    said = (done.stdout if done.returncode == 0 else done.stderr).strip()
    if "Cannot connect to the Docker daemon" in said:  # the CLI's words repeat the address and guess a cause
        said = "nothing listens there"
    return done.returncode == 0, said.splitlines()[-1][-200:] if said else f"exit {done.returncode}"


def state(hosts: SwarmHosts, machine: Machine) -> str | None:
    """How `machine` was seen lost, in words; None when its engine answers and the manager lists it ready."""
    answered, said = _docker(machine.engine, "version", "--format", "{{.Server.Version}}")
    seen = [] if answered else [f"its engine {machine.engine} did not answer ({said})"]
    if machine != hosts.manager:
        listed, node_state = _docker(hosts.manager.engine, "node", "inspect", machine.name, "--format",
                                     "{{.Status.State}}")
        if listed and node_state != "ready":
            seen.append(f"the swarm's manager lists it {node_state}")
    return "; ".join(seen) or None


def lost(hosts: SwarmHosts, roles: tuple[str, ...]) -> list[LostMachine]:
    """The machines running any of `roles` that are lost, each asked once, with every role each one ran."""
    found = []
    for machine in hosts.machines:
        if set(machine.roles) & set(roles):
            seen = state(hosts, machine)
            if seen is not None:
                found.append(LostMachine(machine.name, machine.roles, seen))
    return found
