"""The Swarm backend: compose.yaml deployed as a stack onto an existing Docker Swarm, each role on the machine the
hosts file gives it (capbench/hosts/swarm_hosts.py), placed there by a node label. The harness reaches each machine's own
engine (the hosts file's DOCKER_HOST for it) for whatever happens there: commands in a task's container, its
health, faults and the engine's own events that time them. Stack-wide changes go through the manager.
PCP's tools run on this machine's engine, as with Compose (the images are built here)."""
from __future__ import annotations

import json
import os
import subprocess
import time
from pathlib import Path

from capbench.hosts import (
    haproxy,
    jvm,
    netfault,
    stack,
    stats_tunnel,
    swarm_hosts,
    swarm_images,
    swarm_machines,
    topology,
)
from capbench.hosts.backend import ClusterError, Delay, Done, paused
from capbench.hosts.compose import GONE, pcp_tools_here
from capbench.hosts.table import print_table
from capbench.hosts.topology import ROOT

COMPOSE = str(ROOT / "cluster" / "compose" / "compose.sh")
APP = str(ROOT / "cluster" / "app.sh")
SERVICE_LABEL = "com.docker.swarm.service.name"
# A task on its way to running, or running: a node with none has ended for good (with restart condition none,
# capbench/hosts/stack.py, Swarm starts no new one).
# A service's UpdateStatus.State while a change is rolling out.
ROLLING = ("updating", "rollback_started", "paused", "rollback_paused")
LIVE = ("New", "Pending", "Assigned", "Accepted", "Preparing", "Ready", "Starting", "Running")


# Each task's running container, by (engine, service): the harness makes hundreds of calls to the load host and
# the balancer in a bench, and a backend object is made for each. A task replaced since is looked up again.
_containers: dict[tuple[str, str], str] = {}


def stack_name() -> str:
    return os.environ.get("COMPOSE_PROJECT_NAME") or "capbench"  # the tests' own stack is capbench-it


def docker(engine: str, *args: str, stdin: bytes | None = None, timeout: float = 120,
           check: bool = True) -> subprocess.CompletedProcess:
    """The docker CLI against one machine's engine."""
    done = subprocess.run(["docker", "--host", engine, *args], input=stdin, capture_output=True, timeout=timeout,
                          stdin=subprocess.DEVNULL if stdin is None else None)
    if check and done.returncode != 0:
        raise ClusterError(f"docker {' '.join(args[:2])} on {engine} exited {done.returncode}: "
                           f"{done.stderr.decode(errors='replace').strip()[-400:]}")
    return done


class Swarm:
    name = "swarm"
    built = "images"  # built here, then sent to the machines that run them (capbench/hosts/swarm_images.py)
    setup = None
    database = False  # True where the hosts file places the db role (set per hosts file below)
    live_cpus = False  # a service's CPU limit changes only with a new task
    own_node_images = False  # the machines get the images built here, one for every node (capbench/hosts/swarm_images.py)

    def __init__(self) -> None:
        self.hosts = swarm_hosts.load()
        self.stack = stack_name()
        self.database = self.hosts.database

    @staticmethod
    def running() -> bool:
        """A hosts file, and the manager has this stack deployed."""
        try:
            hosts = swarm_hosts.load()
        except swarm_hosts.HostsFileError:
            return False
        done = docker(hosts.manager.engine, "stack", "ls", "--format", "{{.Name}}", timeout=30, check=False)
        return done.returncode == 0 and stack_name() in done.stdout.decode().split()

    def _engine(self, host: str) -> str:
        return self.hosts.machine_of(host).engine

    def _service(self, host: str) -> str:
        return f"{self.stack}_{host}"

    def _container(self, host: str, fresh: bool = False) -> str | None:
        """The running container of the host's task, on its machine's engine."""
        key = (self._engine(host), self._service(host))
        if fresh or key not in _containers:
            done = docker(key[0], "ps", "--quiet", "--filter", f"label={SERVICE_LABEL}={key[1]}", timeout=30,
                          check=False)
            found = done.stdout.decode().split()
            if len(found) != 1:
                _containers.pop(key, None)
                return None
            _containers[key] = found[0]
        return _containers[key]

    def exec(self, host: str, argv: list[str], stdin: bytes | None = None, timeout: float = 120,
             check: bool = True, user: str | None = None) -> subprocess.CompletedProcess:
        as_user = ["--user", user] if user else []
        done = None
        for fresh in (False, True):
            container = self._container(host, fresh)
            if container is None:
                raise ClusterError(f"{host}: no running task of {self._service(host)} on "
                                   f"{self.hosts.machine_of(host).name} (make up starts it)")
            done = docker(self._engine(host), "exec", "-i", *as_user, container, *argv, stdin=stdin,
                          timeout=timeout, check=False)
            error = done.stderr.decode(errors="replace")
            if done.returncode == 0 or not any(sign in error for sign in GONE):
                break
        if check and done.returncode != 0:
            raise ClusterError(f"{host}: {' '.join(argv[:3])} exited {done.returncode}: "
                               f"{done.stderr.decode(errors='replace').strip()[-400:]}")
        return done

    def _states(self) -> dict[str, str]:
        """Each host's container status as its engine gives it ("Up 2 minutes (healthy)"), one call per machine."""
        states: dict[str, str] = {}
        for machine in self.hosts.machines:
            done = docker(machine.engine, "ps", "--filter", f"label=com.docker.stack.namespace={self.stack}",
                          "--format", f'{{{{.Label "{SERVICE_LABEL}"}}}}\t{{{{.Status}}}}', timeout=30, check=False)
            for line in done.stdout.decode().splitlines():
                service, _, status = line.partition("\t")
                host = service.removeprefix(f"{self.stack}_")
                if host in machine.roles:
                    states[host] = status
        return states

    def unhealthy(self) -> list[str]:
        states = self._states()
        return [h for h in self.hosts.roles if "(healthy)" not in states.get(h, "")]

    def version(self) -> str:
        done = docker(self.hosts.manager.engine, "version", "--format", "{{.Server.Version}}", timeout=30,
                      check=False)
        return (f"Docker Swarm (engine {done.stdout.decode().strip() or 'unknown'} on the manager, "
                f"{len(self.hosts.machines)} machines)")

    def lock_id(self) -> str:
        return f"swarm-{self.stack}"

    # Bringing the stack up ------------------------------------------------------------------------------------

    def up(self) -> int:
        # A user's application: its node image built here and tried on a trial node first, as with Compose; the
        # stack then names it (compose.sh's nodes) and it is sent to the nodes' machines like the others.
        prepared = subprocess.run([APP, "image"], cwd=ROOT)
        if prepared.returncode != 0:
            return prepared.returncode
        try:
            self._check_swarm()
            self._label_machines()
            rendered = self._rendered(os.environ)
            swarm_images.distribute(self.hosts, rendered, swarm_images.registry())
            self._deploy(rendered)
            # At least the nodes' longest start window (APP_START_S for each quota), which their checks honour.
            timeout = max(float(os.environ.get("UP_TIMEOUT", "300")), stack.start_window_s(rendered))
            self._wait_updated(timeout)
            self._restart_ended(topology.NODES)
            self._wait_healthy(self.hosts.roles, timeout)
        except ClusterError as problem:
            print(f"capbench: {problem}", flush=True)
            return 1
        return 0

    def _check_swarm(self) -> None:
        manager = self.hosts.manager
        state = docker(manager.engine, "info", "--format", "{{.Swarm.LocalNodeState}} {{.Swarm.ControlAvailable}}",
                       timeout=30).stdout.decode().split()
        if state != ["active", "true"]:
            raise ClusterError(f"{manager.name} ({manager.engine}) is not a swarm manager: run `docker swarm init` "
                               f"there and join the other machines (docs/guides/swarm.md)")
        listed = docker(manager.engine, "node", "ls", "--format", "{{.Hostname}} {{.Status}}").stdout.decode()
        ready = {name for name, status in (line.split()[:2] for line in listed.splitlines() if line.strip())
                 if status == "Ready"}
        missing = [m.name for m in self.hosts.machines if m.name not in ready]
        if missing:
            raise ClusterError(f"not ready swarm nodes: {', '.join(missing)} (docker node ls on {manager.name} "
                               f"lists {', '.join(sorted(ready)) or 'none ready'}; the hosts file names machines "
                               f"by their swarm hostname)")

    def _label_machines(self) -> None:
        """Each machine carries the label of its roles and no other capbench label."""
        manager = self.hosts.manager.engine
        for machine in self.hosts.machines:
            present = self._capbench_labels(machine.name)
            wanted = {stack.placement_label(role) for role in machine.roles}
            changes = [a for label in sorted(wanted - present) for a in ("--label-add", f"{label}=true")]
            changes += [a for label in sorted(present - wanted) for a in ("--label-rm", label)]
            if changes:
                docker(manager, "node", "update", *changes, machine.name)

    def _capbench_labels(self, machine: str) -> set[str]:
        """The placement labels (capbench/hosts/stack.py) the swarm node carries now."""
        labels = docker(self.hosts.manager.engine, "node", "inspect", "--format",
                        "{{range $k, $v := .Spec.Labels}}{{$k}} {{end}}", machine, check=False).stdout.decode()
        return {label for label in labels.split() if label.startswith(stack.LABEL_PREFIX)}

    def _new_task(self, host: str) -> None:
        """A new task for the host's service: how a node Swarm will not restart comes back."""
        docker(self.hosts.manager.engine, "service", "update", "--force", "--detach", self._service(host))

    def _rendered(self, env) -> dict:
        done = subprocess.run([COMPOSE, "config", "--format", "json"], env=dict(env), capture_output=True,
                              timeout=60, cwd=ROOT)
        if done.returncode != 0:
            raise ClusterError(done.stderr.decode(errors="replace").strip()[-600:])
        return stack.render(json.loads(done.stdout), self.hosts, swarm_images.registry())

    def _deploy(self, rendered: dict) -> None:
        """stack deploy from stdin, so the settings (the stats credentials among them) are written nowhere."""
        document = json.dumps(swarm_images.by_id(rendered, swarm_images.registry())).encode()
        docker(self.hosts.manager.engine, "stack", "deploy", "--prune", "--resolve-image", "never",
               "--compose-file", "-", self.stack, stdin=document, timeout=180)

    def _wait_updated(self, timeout: float) -> None:
        """Until no service of the stack is still rolling out a change: right after a deploy the old tasks are
        still healthy, and waiting on health alone returned before the new ones existed."""
        services = [self._service(h) for h in self.hosts.roles]
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            states = docker(self.hosts.manager.engine, "service", "inspect", "--format",
                            "{{if .UpdateStatus}}{{.UpdateStatus.State}}{{end}}", *services,
                            check=False).stdout.decode().split()
            if not any(state in ROLLING for state in states):
                return
            time.sleep(1)
        raise ClusterError(f"the stack's services still rolling out after {timeout:.0f} s")

    def _restart_ended(self, hosts) -> None:
        """A node Swarm will not restart (killed by a fault, or failed) gets a new task."""
        for host in hosts:
            states = docker(self.hosts.manager.engine, "service", "ps", "--format", "{{.CurrentState}}",
                            self._service(host), check=False).stdout.decode().splitlines()
            if states and not any(state.startswith(LIVE) for state in states):
                self._new_task(host)

    def _wait_healthy(self, hosts, timeout: float) -> None:
        started = time.monotonic()
        while True:
            states = self._states()
            waiting = [h for h in hosts if "(healthy)" not in states.get(h, "")]
            if not waiting:
                print(f"capbench: all services healthy in {time.monotonic() - started:.0f} s", flush=True)
                return
            if time.monotonic() - started > timeout:
                for host in waiting:
                    tasks = docker(self.hosts.manager.engine, "service", "ps", "--no-trunc", "--format",
                                   "{{.Node}} {{.CurrentState}} {{.Error}}", self._service(host), check=False)
                    print(f"---- {host}: {states.get(host, 'no container')}\n{tasks.stdout.decode()[:800]}",
                          flush=True)
                raise ClusterError(f"not healthy after {time.monotonic() - started:.0f} s (the wait: {timeout:.0f} s, "
                                   f"at least the nodes' longest start window): {', '.join(waiting)}")
            time.sleep(2)

    def recreate(self, hosts: tuple[str, ...], settings: dict[str, str], fresh: bool = False) -> None:
        old = {host: self._container(host, fresh=True) for host in hosts}
        self._deploy(self._rendered({**os.environ, **settings}))
        self._wait_updated(240)
        for host in hosts:
            if fresh and self._container(host, fresh=True) == old[host]:  # its spec did not change: Swarm kept it
                self._new_task(host)
        deadline = time.monotonic() + 240
        while time.monotonic() < deadline:
            unhealthy = self.unhealthy()
            if all(self._container(h, fresh=True) not in (None, old[h]) and h not in unhealthy for h in hosts):
                return
            time.sleep(1)
        raise ClusterError(f"{', '.join(hosts)} did not come back healthy with {settings} within 240 s")

    # Faults, timed by the engine of the node's own machine -----------------------------------------------------

    def set_cpus(self, node: str, cpus: str) -> bool:
        return False  # a service's CPU limit changes only with a new task

    def fault(self, node: str, fault: str, action: str, delay: Delay | None = None) -> Done:
        engine = self._engine(node)
        if fault in netfault.FAULTS:
            return netfault.in_container(engine, self._running(node, fault), node, fault, action, delay)
        before = time.time()
        if (fault, action) == ("kill", "recover"):
            self._new_task(node)
            event, where = "start", f"label={SERVICE_LABEL}={self._service(node)}"
        else:
            container = self._running(node, fault)
            event = {"kill": "kill", "freeze": "pause" if action == "inject" else "unpause"}[fault]
            if event == "pause":
                paused(lambda: docker(engine, "pause", container, timeout=60),
                       lambda: docker(engine, "unpause", container, timeout=60, check=False))
            else:
                docker(engine, *(["kill", "--signal", "SIGKILL"] if event == "kill" else [event]), container,
                       timeout=60)
            where = f"container={container}"
        after = time.time()
        at = self._event_time(engine, where, event, before, wait_s=60 if event == "start" else 2)
        machine = self.hosts.machine_of(node).name
        if at is not None:
            return Done(at, 0.0, f"the {event} event of {machine}'s Docker engine")
        return Done((before + after) / 2, round((after - before) / 2, 3), "the middle of the docker call")

    @staticmethod
    def _event_time(engine: str, where: str, event: str, since: float, wait_s: float) -> float | None:
        deadline = time.time() + wait_s
        while True:
            done = docker(engine, "events", "--since", f"{since - 1:.3f}", "--until", f"{time.time():.3f}",
                          "--filter", where, "--filter", f"event={event}", "--format", "{{.TimeNano}}",
                          timeout=60, check=False)
            times = [int(t) / 1e9 for t in done.stdout.decode().split() if t.isdigit()]
            if any(t >= since - 1 for t in times):
                return min(t for t in times if t >= since - 1)
            if time.time() > deadline:
                return None
            time.sleep(0.5)

    def netem_missing(self, node: str) -> str:
        return netfault.netem_missing(self._engine(node), self._running(node, "delay"), node,
                                      self.hosts.machine_of(node).name)

    def _running(self, node: str, fault: str) -> str:
        container = self._container(node, fresh=True)
        if container is None:
            raise ClusterError(f"{node} has no running task to {fault}")
        return container

    def lost_machines(self, hosts: tuple[str, ...]) -> list:
        return swarm_machines.lost(self.hosts, hosts)

    def pcp_tools(self, script: str, pcp_dir: Path, out_dir: Path) -> None:
        pcp_tools_here(script, pcp_dir, out_dir)

    # Down, status, logs ---------------------------------------------------------------------------------------

    def down(self) -> int:
        manager = self.hosts.manager.engine
        docker(manager, "stack", "rm", self.stack, check=False)
        deadline = time.monotonic() + 90
        # Every network of the stack (the bench's and the database's), which Swarm removes one after another
        # after stack rm returns: a slow machine still listed the database's once the bench's had gone.
        prefix = f"{self.stack}_"
        while time.monotonic() < deadline:
            left = {f"{m.name}: {name}" for m in self.hosts.machines
                    for name in docker(m.engine, "network", "ls", "--format", "{{.Name}}",
                                       check=False).stdout.decode().split() if name.startswith(prefix)}
            if not left:
                break
            time.sleep(1)
        else:
            print(f"capbench: the stack's networks still there after 90 s: {', '.join(sorted(left))}", flush=True)
            return 1
        for role, (volume, _) in stack.DATA_VOLUMES.items():  # stack rm keeps volumes: the database's data goes
            if role in self.hosts.roles:
                docker(self.hosts.machine_of(role).engine, "volume", "rm", "--force", f"{self.stack}_{volume}",
                       check=False)
        for machine in self.hosts.machines:
            removals = [a for label in sorted(self._capbench_labels(machine.name)) for a in ("--label-rm", label)]
            if removals:
                docker(manager, "node", "update", *removals, machine.name, check=False)
        return 0

    def stats(self) -> int:
        container = self._container("lb", fresh=True)
        if container is None:
            print("capbench: no balancer runs (make up BACKEND=swarm starts it)")
            return 1
        stats_tunnel.run(["docker", "--host", self._engine("lb"), "exec", "-i", container],
                         int(os.environ.get("STATS_PORT") or 8404))
        return 0

    def logs(self, host: str | None, follow: bool) -> int:
        status = 0
        for name in [host] if host else list(self.hosts.roles):
            print(f"---- {name}", flush=True)
            argv = ["docker", "--host", self.hosts.manager.engine, "service", "logs", "--tail", "200",
                    *(["--follow"] if follow else []), self._service(name)]
            status = subprocess.run(argv).returncode or status
        return status

    def status(self) -> int:
        """One row per host: the machine it runs on, state and health, its CPU and memory limits, heap and GC
        for the nodes, and how HAProxy sees the node."""
        states = self._states()
        if not states:
            print(f"capbench: no task of the stack {self.stack} runs (make up BACKEND=swarm starts it)")
            return 1
        try:
            lb = haproxy.server_stats() if "lb" in states else {}
        except ClusterError:
            lb = {}
        table = [["SERVICE", "MACHINE", "STATUS", "CPUS", "MEMORY", "GC", "JVM CPUS", "LB WEIGHT", "LB STATUS"]]
        for host in self.hosts.roles:
            machine = self.hosts.machine_of(host)
            cpus = memory = gc = jvm_cpus = "-"
            container = self._container(host, fresh=True)
            if container:
                limits = docker(machine.engine, "inspect", "--format",
                                "{{.HostConfig.NanoCpus}} {{.HostConfig.Memory}}", container,
                                check=False).stdout.decode().split()
                if len(limits) == 2:
                    cpus = f"{int(limits[0]) / 1e9:.2f}" if int(limits[0]) else "-"
                    memory = f"{int(limits[1]) // 2**20}MiB" if int(limits[1]) else "-"
                info = jvm.node_info(host) if host in topology.NODES else None
                if info:
                    gc, jvm_cpus, _ = jvm.status_fields(info)
            server = lb.get(host, {})
            table.append([host, machine.name, states.get(host, "absent"), cpus, memory, gc, jvm_cpus,
                          server.get("weight", "-"), server.get("status", "-")])
        print_table(table)
        return 0
