"""The Compose backend: each host a container of compose.yaml on this machine's Docker engine, reached with
`docker compose exec` through cluster/compose/compose.sh (so the cluster's settings apply and are checked).
Faults are Docker's own (kill, pause) and timed by Docker's events; PCP's tools run in the controller image."""
from __future__ import annotations

import json
import os
import subprocess
import tempfile
import time
from pathlib import Path

from capbench.hosts import haproxy, jvm, netfault, topology
from capbench.hosts.backend import ClusterError, Delay, Done, paused
from capbench.hosts.table import print_table
from capbench.hosts.topology import DATABASE, ROOT

COMPOSE = str(ROOT / "cluster" / "compose" / "compose.sh")
UP = str(ROOT / "cluster" / "compose" / "up.sh")
CONTROLLER_IMAGE = "capbench-controller:latest"
# The Docker event that marks each action taking effect.
DOCKER_EVENT = {("kill", "inject"): "kill", ("freeze", "inject"): "pause", ("kill", "recover"): "start",
                ("freeze", "recover"): "unpause"}


def compose(*args: str, stdin: bytes | None = None, timeout: float = 120, check: bool = True,
            settings: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    """cluster/compose/compose.sh with the environment's settings, and `settings` over them."""
    env = {**os.environ, **settings} if settings else None
    done = subprocess.run([COMPOSE, *args], input=stdin, capture_output=True, timeout=timeout, cwd=ROOT, env=env)
    if check and done.returncode != 0:
        raise ClusterError(f"compose {' '.join(args[:3])} exited {done.returncode}: "
                           f"{done.stderr.decode(errors='replace').strip()[-400:]}")
    return done


# Each service's running container, by (project, service): `docker exec` on it costs half of what `docker compose
# exec` does (no Compose start-up, no settings check), and a bench makes hundreds of calls. A container
# re-created since (new settings) is looked up again.
_containers: dict[tuple[str, str], str] = {}
GONE = ("No such container", "is not running")


def _project() -> str:
    return os.environ.get("COMPOSE_PROJECT_NAME") or "capbench"  # compose.yaml's name


def _container(host: str, fresh: bool = False) -> str | None:
    key = (_project(), host)
    if fresh or key not in _containers:
        done = subprocess.run(["docker", "ps", "--quiet", "--filter", f"label=com.docker.compose.project={key[0]}",
                               "--filter", f"label=com.docker.compose.service={host}"],
                              capture_output=True, text=True, timeout=30)
        found = done.stdout.split()
        if len(found) != 1:
            _containers.pop(key, None)
            return None
        _containers[key] = found[0]
    return _containers[key]


def _ps() -> dict[str, dict]:
    """compose ps, one row per service ({} when nothing runs or Compose fails)."""
    done = compose("ps", "--all", "--format", "json", check=False)
    text = done.stdout.decode().strip() if done.returncode == 0 else ""
    rows = json.loads(text) if text.startswith("[") else [json.loads(line) for line in text.splitlines() if line]
    return {row["Service"]: row for row in rows}

# Every service of compose.yaml that runs: the topology's hosts and the shared database.
def services() -> tuple[str, ...]:
    return (*topology.HOSTS, DATABASE)

class Compose:
    name = "compose"
    built = "images"
    setup = None  # make setup is this backend's setup
    database = True
    live_cpus = True  # docker update --cpus
    own_node_images = True  # each node is a service of its own

    @staticmethod
    def running() -> bool:
        return False  # the default backend: chosen when no other one's hosts run

    def exec(self, host: str, argv: list[str], stdin: bytes | None = None, timeout: float = 120,
             check: bool = True, user: str | None = None) -> subprocess.CompletedProcess:
        as_user = ["--user", user] if user else []
        for fresh in (False, True):
            container = _container(host, fresh)
            if container is None:  # not running: Compose says so in its own words
                return compose("exec", "-T", *as_user, host, *argv, stdin=stdin, timeout=timeout, check=check)
            done = subprocess.run(["docker", "exec", "-i", *as_user, container, *argv], input=stdin,
                                  stdin=subprocess.DEVNULL if stdin is None else None, capture_output=True,
                                  timeout=timeout)
            error = done.stderr.decode(errors="replace")
            if done.returncode == 0 or not any(sign in error and container in error for sign in GONE):
                break
        if check and done.returncode != 0:
            raise ClusterError(f"{host}: {' '.join(argv[:3])} exited {done.returncode}: {error.strip()[-400:]}")
        return done

    def unhealthy(self) -> list[str]:
        rows = _ps()
        return [h for h in services() if rows.get(h, {}).get("State") != "running"
                or rows.get(h, {}).get("Health") != "healthy"]

    def version(self) -> str:
        done = subprocess.run(["docker", "compose", "version", "--short"], capture_output=True, text=True)
        return f"Compose {done.stdout.strip() or 'unknown'}"

    def lock_id(self) -> str:
        return "compose-" + os.environ.get("COMPOSE_PROJECT_NAME", "capbench")

    def up(self) -> int:
        return subprocess.run([UP], cwd=ROOT).returncode

    def recreate(self, hosts: tuple[str, ...], settings: dict[str, str], fresh: bool = False) -> None:
        compose("up", "--detach", "--no-build", "--no-deps", *(["--force-recreate"] if fresh else []), "--wait",
                "--wait-timeout", "120", *hosts, settings=settings, timeout=240)

    def set_cpus(self, node: str, cpus: str) -> bool:
        container = _container(node, fresh=True)
        if container is None:
            raise ClusterError(f"{node} has no running container to give {cpus} CPUs")
        done = subprocess.run(["docker", "update", "--cpus", cpus, container], capture_output=True, text=True,
                              timeout=60)
        if done.returncode != 0:
            raise ClusterError(f"docker update --cpus {cpus} {node}: {done.stderr.strip()[-300:]}")
        return True

    def fault(self, node: str, fault: str, action: str, delay: Delay | None = None) -> Done:
        if fault in netfault.FAULTS:
            return netfault.in_container("", self._running(node, fault), node, fault, action, delay)
        event = DOCKER_EVENT[(fault, action)]
        before = time.time()
        if event == "kill":
            compose("kill", "--signal", "SIGKILL", node, timeout=60)
        elif event == "pause":
            paused(lambda: compose("pause", node, timeout=120), lambda: compose("unpause", node, timeout=120,
                                                                                check=False))
        else:
            compose(event, node, timeout=120)
        after = time.time()
        at = self._docker_event(node, event, before)
        if at is not None:
            return Done(at, 0.0, f"Docker's {event} event")
        return Done((before + after) / 2, round((after - before) / 2, 3), "the middle of the docker call")

    @staticmethod
    def _docker_event(node: str, event: str, since: float) -> float | None:
        """When Docker says the container had the event (nanoseconds; the command line takes most of a second
        to start, so its own timing would be far coarser)."""
        container = compose("ps", "--quiet", node, timeout=60).stdout.decode().strip()
        done = subprocess.run(["docker", "events", "--since", f"{since - 1:.3f}", "--until", f"{time.time() + 1:.3f}",
                               "--filter", f"container={container}", "--filter", f"event={event}",
                               "--format", "{{.TimeNano}}"], capture_output=True, text=True, timeout=60)
        times = [int(line) / 1e9 for line in done.stdout.split() if line.isdigit()]
        return min((t for t in times if t >= since - 1), default=None)

    def netem_missing(self, node: str) -> str:
        return netfault.netem_missing("", self._running(node, "delay"), node, "this machine")

    @staticmethod
    def _running(node: str, fault: str) -> str:
        container = _container(node, fresh=True)
        if container is None:
            raise ClusterError(f"{node} has no running container to {fault}")
        return container

    def lost_machines(self, hosts: tuple[str, ...]) -> list:
        return []  # every host runs on the harness's own machine

    def pcp_tools(self, script: str, pcp_dir: Path, out_dir: Path) -> None:
        pcp_tools_here(script, pcp_dir, out_dir)

    def down(self) -> int:
        """Everything of the project, by its name alone: whatever NODES and PROFILE it was started with, and
        whatever the settings now say (a profile that cannot describe NODES=4 must not keep node4 running)."""
        with tempfile.TemporaryDirectory() as nowhere:  # no compose.yaml here: nothing to read or check
            return subprocess.run(["docker", "compose", "--project-name", _project(), "down", "--remove-orphans",
                                   "--timeout", "20"], cwd=nowhere).returncode

    def stats(self) -> int:
        published = _ports(_ps().get("lb", {}))
        if published == "-":
            print("capbench: the balancer publishes no stats port (make up starts it)")
            return 1
        address = published.split("->")[0]
        print(f"capbench: the stats page at http://{address}/stats (user and password in .capbench/secrets.env)")
        return 0

    def logs(self, host: str | None, follow: bool) -> int:
        argv = [COMPOSE, "logs", "--tail", "200", *(["--follow"] if follow else []), *([host] if host else [])]
        return subprocess.run(argv, cwd=ROOT).returncode

    def status(self) -> int:
        """One row per host: state and health, the container's CPU quota and memory limit, for the nodes what
        the JVM itself reports (heap, GC in use, processors it counts) and how HAProxy sees the node."""
        ps = _ps()
        if not ps:
            print("capbench: no capbench containers (make up starts them)")
            return 1
        try:
            lb = haproxy.server_stats() if ps.get("lb", {}).get("State") == "running" else {}
        except ClusterError:
            lb = {}
        header = ["SERVICE", "STATE", "HEALTH", "CPUS", "MEMORY", "HEAP", "GC", "JVM CPUS", "LB WEIGHT", "LB STATUS",
                  "PUBLISHED"]
        table = [header]
        for host in services():
            entry = ps.get(host)
            if entry is None:
                table.append([host, "absent"] + ["-"] * (len(header) - 2))
                continue
            container = _inspect(entry["ID"])
            cpus, mem = _limits(container)
            heap = gc = jvm_cpus = "-"
            server = lb.get(host, {})
            if host in topology.NODES and entry.get("State") == "running":
                info = jvm.node_info(host)
                if info:
                    # The -Xmx the node was given, and the part the JVM reports usable (less a survivor space).
                    gc, jvm_cpus, usable = jvm.status_fields(info)
                    heap = f"{_env(container).get('JVM_HEAP', '?')} ({usable})"
            table.append([host, entry.get("State", "?"), entry.get("Health") or "-", cpus, mem, heap, gc, jvm_cpus,
                          server.get("weight", "-"), server.get("status", "-"), _ports(entry)])
        print_table(table)
        return 0



def pcp_tools_here(script: str, pcp_dir: Path, out_dir: Path) -> None:
    """PCP's tools in a throw-away container of the controller image on this machine's engine, with no network:
    the archives mounted read-only (the Swarm backend's harness runs here too)."""
    argv = ["docker", "run", "--rm", "-i", "--network", "none", "--user", f"{os.getuid()}:{os.getgid()}",
            "-e", "HOME=/tmp", "-v", f"{pcp_dir.resolve()}:/work/pcp:ro", "-v", f"{out_dir.resolve()}:/work/out",
            "--entrypoint", "/usr/bin/tini", CONTROLLER_IMAGE, "--", "bash", "-s", "/work"]
    try:
        done = subprocess.run(argv, input=script.encode(), capture_output=True, timeout=600)
    except (OSError, subprocess.TimeoutExpired) as problem:
        raise ClusterError(f"PCP's tools could not run: {problem}") from problem
    if done.returncode != 0:
        raise ClusterError(f"PCP's tools in {CONTROLLER_IMAGE} exited {done.returncode}: "
                           f"{done.stderr.decode()[-300:]}")


def _inspect(container_id: str) -> dict:
    done = subprocess.run(["docker", "inspect", container_id], capture_output=True, text=True, timeout=30)
    return json.loads(done.stdout or "[{}]")[0] if done.returncode == 0 else {}


def _env(container: dict) -> dict[str, str]:
    pairs = (item.partition("=") for item in container.get("Config", {}).get("Env") or [])
    return {key: value for key, _, value in pairs}


def _limits(container: dict) -> tuple[str, str]:
    host = container.get("HostConfig", {})
    nano_cpus, memory = host.get("NanoCpus") or 0, host.get("Memory") or 0
    return (f"{nano_cpus / 1e9:.2f}" if nano_cpus else "-"), (f"{memory // 2**20}MiB" if memory else "-")


def _ports(entry: dict) -> str:
    published = [f"{p['URL']}:{p['PublishedPort']}->{p['TargetPort']}"
                 for p in entry.get("Publishers") or [] if p.get("PublishedPort")]
    return ",".join(published) or "-"
