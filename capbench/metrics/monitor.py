"""The run's monitoring, seen from the harness: the controller's pmloggers (metrics/pcp-loggers) log every
monitored host each second while the run measures, and at the end their archives come to the user's disk as
results/<run-id>/pcp/<host>/. The controller's own CPU while logging is recorded too: it is the pmloggers'
cost (the agents' cost on each host is in the archives themselves, hotproc.* of PCP's processes)."""
from __future__ import annotations

import io
import tarfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from capbench.hosts import topology
from capbench.hosts.backend import ClusterError, backend
from capbench.hosts.topology import DATABASE, role

LOGGERS = "/opt/capbench/bin/pcp-loggers"
REMOTE_RUNS = "/home/capbench/runs"  # on the controller
CONTROLLER_CPU = "/sys/fs/cgroup/cpuacct/cpuacct.usage"  # ns, cgroup v1 as on our hosts


def controller(*argv: str, timeout: float = 120, check: bool = True) -> bytes:
    return backend().exec("controller", list(argv), timeout=timeout, check=check).stdout


def _controller_cpu_ns() -> int | None:
    text = controller("cat", CONTROLLER_CPU, check=False).decode().strip()
    return int(text) if text.isdigit() else None


def monitored_hosts() -> dict[str, str]:
    """Each host the controller logs and its role: the topology's, and the database where the backend runs it."""
    hosts = [*topology.MONITORED, *([DATABASE] if backend().database else [])]
    return {host: role(host) for host in hosts}


@dataclass
class Monitor:
    """pmloggers for one run; start() and stop() may alternate (bench-overhead logs only some searches)."""
    run_id: str
    pcp_dir: Path
    # Each monitored host and its role, which names its pmlogger config (metrics/pmlogger/<role>.conf).
    hosts: dict[str, str] = field(default_factory=monitored_hosts)
    logging: bool = False
    sessions: list[dict] = field(default_factory=list)

    @property
    def remote_dir(self) -> str:
        return f"{REMOTE_RUNS}/{self.run_id}"

    def start(self) -> list[str]:
        """Starts one pmlogger per host once its metrics exist; returns one line per host on how it went."""
        cpu = _controller_cpu_ns()
        pairs = [f"{host}:{role}" for host, role in self.hosts.items()]
        lines = controller(LOGGERS, "start", self.remote_dir, *pairs, timeout=180).decode().splitlines()
        self.logging = True
        self.sessions.append({"started_epoch": time.time(), "controller_cpu_ns_at_start": cpu, "hosts": lines})
        failed = [line for line in lines if line.startswith("failed")]
        if failed:
            self.stop()
            raise ClusterError("monitoring did not start: " + "; ".join(failed))
        return lines

    def stop(self) -> None:
        """Stops the loggers (each closes its archive cleanly) and records what the controller spent."""
        if not self.logging:
            return
        self.logging = False
        controller(LOGGERS, "stop", self.remote_dir, timeout=60)
        session = self.sessions[-1]
        session["ended_epoch"] = time.time()
        before, after = session.pop("controller_cpu_ns_at_start"), _controller_cpu_ns()
        if before is not None and after is not None:
            seconds = session["ended_epoch"] - session["started_epoch"]
            session["controller_cpu_pct_of_one_core"] = round(100 * (after - before) / 1e9 / seconds, 2)

    def collect(self) -> None:
        """Brings the archives to results/<run-id>/pcp/ and removes them from the controller."""
        archive = controller("tar", "-C", self.remote_dir, "--exclude=*.pid", "-c", ".", timeout=300, check=False)
        if archive:
            self.pcp_dir.mkdir(parents=True, exist_ok=True)
            with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
                tar.extractall(self.pcp_dir, filter="data")
        controller("rm", "-rf", self.remote_dir, check=False)

    def summary(self) -> dict:
        return {"hosts": self.hosts, "sessions": self.sessions}
