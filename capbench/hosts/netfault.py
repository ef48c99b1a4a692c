"""Network faults done to a node in its own network namespace, on its own machine, by the kernel's own tools:

  partition  every packet to or from the node's bench address dropped (nftables, a table of its own), so the
             balancer and the load see silence, as behind a cut link; its loopback (where its health check asks)
             and its other networks (the database's) untouched; recovered by deleting the table
  delay      latency and loss added to what leaves the node's bench interface (tc's netem qdisc), recovered by
             deleting the qdisc; where the machine's kernel has no netem (CONFIG_NET_SCH_NETEM unset, as on our
             machines) bench-failover refuses FAULT=delay before it starts (why_no_netem)

A container backend runs the script in a short-lived helper that joins the node's network namespace with
NET_ADMIN alone, from the node's own image (cluster/provision/node.sh installs nftables and iproute2; Tomcat's user
holds no capability); a VM runs it as root. The script prints the clock when its change took effect."""
from __future__ import annotations

import json
import shlex
import subprocess
import time

from capbench.hosts.backend import ClusterError, Delay, Done

FAULTS = ("partition", "delay")
TABLE = "capbench_fault"
# A netem qdisc added to the loopback of a namespace of its own, which disappears with it: the kernel's answer
# says whether netem exists, and nothing of the node is touched.
NETEM_PROBE = "tc qdisc add dev lo root netem delay 1ms"
NO_NETEM = "Specified qdisc kind is unknown"


def script(fault: str, action: str, address: str, delay: Delay | None = None) -> str:
    """The shell script that does (inject) or undoes (recover) `fault` to the interface holding `address`, then
    prints the epoch seconds when it took effect."""
    if fault == "partition":
        change = (f"nft -f - <<'EOF'\ntable inet {TABLE} {{\n"
                  f"  chain input {{ type filter hook input priority -10; ip daddr {address} drop; }}\n"
                  f"  chain output {{ type filter hook output priority -10; ip saddr {address} drop; }}\n}}\nEOF"
                  if action == "inject" else f"nft delete table inet {TABLE}")
    elif fault == "delay":
        delay = delay or Delay()
        interface = (f"dev=$(ip -o -4 addr show to {shlex.quote(address)} | awk '{{print $2; exit}}')\n"
                     f"[ -n \"$dev\" ] || {{ echo 'no interface holds {address}' >&2; exit 1; }}\n")
        change = interface + (f"tc qdisc add dev \"$dev\" root netem delay {delay.ms}ms loss {delay.loss_pct:g}%"
                              if action == "inject" else "tc qdisc del dev \"$dev\" root")
    else:
        raise ValueError(f"'{fault}' is not a network fault: use {' or '.join(FAULTS)}")
    return f"set -eu\n{change}\ndate +%s.%N\n"


def done(completed: subprocess.CompletedProcess, fault: str, action: str, node: str, before: float,
         after: float) -> Done:
    """When the script's change took effect (its own clock), or ClusterError with what the tool said."""
    out = completed.stdout.decode(errors="replace").split()
    if completed.returncode != 0 or not out:
        said = completed.stderr.decode(errors="replace").strip().splitlines()
        raise ClusterError(f"{action} {fault} on {node} failed: {said[-1] if said else 'no answer'}")
    try:
        return Done(float(out[-1]), 0.0, "the clock of the node's machine when nft/tc returned")
    except ValueError:
        return Done((before + after) / 2, round((after - before) / 2, 3), "the middle of the helper's run")


def in_container(engine: str, container: str, node: str, fault: str, action: str,
                 delay: Delay | None = None) -> Done:
    """Does or undoes `fault` in the network namespace of `container` (on the Docker engine at `engine`, '' for
    this machine's), with a helper from the container's own image."""
    inspected = json.loads(_docker(engine, "inspect", container).stdout)[0]
    address = bench_address(inspected)
    before = time.time()
    completed = _docker(engine, *helper_argv(container, inspected["Image"]),
                        stdin=script(fault, action, address, delay).encode(), check=False)
    return done(completed, fault, action, node, before, time.time())


def netem_missing(engine: str, container: str, node: str, machine: str) -> str:
    """'' when the kernel under `container` has netem; else why FAULT=delay cannot run there (one line)."""
    image = json.loads(_docker(engine, "inspect", container).stdout)[0]["Image"]
    return why_no_netem(_docker(engine, *helper_argv(container, image, network="none"), stdin=NETEM_PROBE.encode(),
                                check=False), node, machine)


def _docker(engine: str, *args: str, stdin: bytes | None = None, check: bool = True) -> subprocess.CompletedProcess:
    done = subprocess.run(["docker", *(["--host", engine] if engine else []), *args], input=stdin,
                          capture_output=True, timeout=120)
    if check and done.returncode != 0:
        raise ClusterError(f"docker {' '.join(args[:2])} exited {done.returncode}: "
                           f"{done.stderr.decode(errors='replace').strip()[-300:]}")
    return done


def helper_argv(container: str, image: str, network: str | None = None) -> list[str]:
    """`docker run` arguments for a helper in `container`'s network namespace (or, with network="none", in one of
    its own), from `image`, with NET_ADMIN and no other capability, reading its script on standard input."""
    return ["run", "--rm", "-i", "--network", network or f"container:{container}", "--cap-drop", "ALL",
            "--cap-add", "NET_ADMIN", "--user", "root", "--entrypoint", "sh", image, "-s"]


def bench_address(inspected: dict, network_suffix: str = "_bench") -> str:
    """The container's address on the bench network, from `docker inspect`'s answer."""
    for name, network in (inspected.get("NetworkSettings", {}).get("Networks") or {}).items():
        if name.endswith(network_suffix) and network.get("IPAddress"):
            return network["IPAddress"]
    raise ClusterError(f"{inspected.get('Name', 'the container')} has no address on the bench network")


def why_no_netem(completed: subprocess.CompletedProcess, node: str, machine: str) -> str:
    """'' when the probe added its netem qdisc; else one line saying why FAULT=delay cannot run."""
    if completed.returncode == 0:
        return ""
    said = completed.stderr.decode(errors="replace").strip().splitlines()
    reason = said[-1] if said else f"exit status {completed.returncode}"
    if NO_NETEM in reason:
        reason = "its kernel has no netem queueing discipline (CONFIG_NET_SCH_NETEM)"
    return (f"FAULT='delay' cannot run on {node}'s machine ({machine}): {reason}; use FAULT=partition, kill or "
            "freeze, or a machine whose kernel has netem")
