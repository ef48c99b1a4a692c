"""What a new TLS connection costs each host that ends one, measured at the start of a run where TLS is on
(run.json's tls.handshake_cost), so that a step's handshakes can be priced in its own CPU (capbench/analysis/
tls_share.py: the TLS-bound hint). Per host that ends a TLS connection of the run's (the balancer with TLS=lb or
both; the nodes the run measures with TLS=node or both), from the first load host: capload -handshakes opens
connections at PROBE_RATE, each a full handshake with the certificate verified and then closed with no request;
a first WARM_S of them is not counted (the JVM's TLS code is compiled on its first handshakes); then the host's
own process (haproxy, or the node's java) is read for its CPU time (/proc, capbench/hosts/process_cpu.py) around
PROBE_S more. Its CPU ms a handshake is what one more new connection costs there: the TCP accept, the full
handshake, the close. What the process spends idle (a JVM's own threads, the metrics agent's scrapes: a few % of
a core, 0.5 ms a handshake at the probe's rate in a trial) is read over PROBE_S of nothing first and taken out,
by the wall time of each window. The probe runs on an idle cluster, like the calibration beside it: where the
machine's speed moves during the run, a step's handshakes cost what they cost then."""
from __future__ import annotations

import json
import subprocess
import time
from dataclasses import dataclass

from capbench.engine.progress import say
from capbench.hosts import process_cpu
from capbench.hosts.backend import ClusterError
from capbench.hosts.balancer_address import BALANCER, BALANCER_TLS_PORT, CA_FILE, NODE_TLS, PASSED_THROUGH
from capbench.load.drivers.capload import LOADHOST_BINARY

PROBE_RATE = 50  # handshakes/s: below what node3's 0.3 core completes, so no host is probed saturated
PROBE_CONNECTIONS = 4
WARM_S, PROBE_S = 2, 4
NODE_TLS_PORT = 8443  # a node's TLS connector (tomcat-conf/render-config.sh)
REPORT = "/tmp/capbench-handshakes.json"  # on the load host


@dataclass(frozen=True)
class Terminator:
    """A host that ends TLS connections: where the probe dials, and the process whose CPU it reads."""
    host: str
    url: str
    process: str


def terminators(tls: str, nodes: tuple[str, ...]) -> list[Terminator]:
    """The hosts that end the run's TLS connections, given TLS and the nodes the run measures."""
    ends = []
    if tls not in PASSED_THROUGH and tls != "off":
        ends.append(Terminator(BALANCER, f"https://{BALANCER}:{BALANCER_TLS_PORT}", "haproxy"))
    if tls in (*NODE_TLS, *PASSED_THROUGH):
        ends += [Terminator(node, f"https://{node}:{NODE_TLS_PORT}", "java") for node in nodes]
    return ends


def probe_argv(terminator: Terminator, seconds: float) -> list[str]:
    return ["sh", "-c", f"{LOADHOST_BINARY} -handshakes -url {terminator.url} -rate {PROBE_RATE} "
                        f"-duration {seconds}s -connections {PROBE_CONNECTIONS} -timeout 5s -cacert {CA_FILE} "
                        f"-report {REPORT} && cat {REPORT}"]


def cost(report: dict, cpu_before_s: float | None, cpu_after_s: float | None, idle_s: float = 0.0) -> dict:
    """One host's figures from the counted run's report and its process's CPU seconds around it, less `idle_s`
    (what it spends idle over as long): the CPU ms a handshake (None where nothing completed or the CPU could not
    be read)."""
    completed = report.get("handshakes") or 0
    used = (cpu_after_s - cpu_before_s - idle_s) if cpu_before_s is not None and cpu_after_s is not None else None
    return {"cpu_ms_per_handshake": round(1000 * used / completed, 3) if used is not None and completed else None,
            "handshakes": completed, "seconds": report.get("duration_s"), "cpu_s": None if used is None else round(used, 3),
            "errors": report.get("errors") or {}, "protocol": report.get("protocol"), "cipher": report.get("cipher")}


def measure_one(load_host, terminator: Terminator) -> dict | None:
    def cpu() -> tuple[float | None, float]:
        return process_cpu.cpu_seconds(terminator.host, terminator.process), time.monotonic()
    try:
        quiet, quiet_at = cpu()
        time.sleep(PROBE_S)  # nothing sent: what the process spends idle
        warm, warm_at = cpu()
        load_host.exec(probe_argv(terminator, WARM_S), timeout=60)
        before, started = cpu()
        report = json.loads(load_host.exec(probe_argv(terminator, PROBE_S), timeout=60))
        after, ended = cpu()
    except (ClusterError, subprocess.TimeoutExpired, ValueError) as problem:
        say(f"warning: the TLS handshake probe of {terminator.host} could not run: {problem}")
        return None
    idle_per_s = (warm - quiet) / (warm_at - quiet_at) if quiet is not None and warm is not None else 0.0
    idle = idle_per_s * (ended - started)
    return (cost(report, before, after, idle) | {"process": terminator.process, "url": terminator.url,
                                                "idle_cores": round(idle_per_s, 4)})


def measure(load_host, tls: str, nodes: tuple[str, ...]) -> dict[str, dict] | None:
    """Per host that ends the run's TLS, what a new connection's full handshake costs it; None where TLS=off."""
    ends = terminators(tls, nodes)
    if not ends:
        return None
    found = {t.host: figures for t in ends if (figures := measure_one(load_host, t)) is not None}
    said = ", ".join(f"{host} {f['cpu_ms_per_handshake']} ms" for host, f in found.items())
    say(f"TLS handshake cost (CPU a new connection, full handshake, no request): {said or 'not measured'}")
    return found
