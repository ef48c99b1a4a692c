"""The hosts of the bench, seen from the harness on the user's machine: every generator runs on the load host,
nodes are taken in and out of rotation through HAProxy's runtime API on the lb host, and the controller logs
every host. On the Compose backend a host is a container, reached with `docker compose exec` through
cluster/compose.sh (so the cluster's settings apply); on the Vagrant backend a VM, reached over SSH as the
user its processes run as (cluster/vagrant/vm.sh). BACKEND in the environment says which (the Makefile sets
it; compose when unset)."""
from __future__ import annotations

import io
import json
import os
import subprocess
import tarfile
import time
from pathlib import Path

from load import ROOT
from load.drivers import Envelope

COMPOSE = str(ROOT / "cluster" / "compose.sh")
VM = str(ROOT / "cluster" / "vagrant" / "vm.sh")
VAGRANT_UP = str(ROOT / "cluster" / "vagrant" / "up.sh")
RUN_STEP = "/opt/capbench/bin/run-step"
WORK_DIR = "/tmp/capbench"  # on the load host, writable by its user
NODES = ("node1", "node2", "node3")
SERVICES = (*NODES, "lb", "load", "controller")
# The user each host's processes run as: the images' USER, and on VMs the units' User (sudo -u over SSH).
HOST_USERS = {"node1": "tomcat", "node2": "tomcat", "node3": "tomcat", "lb": "haproxy", "load": "capbench",
              "controller": "capbench"}


class ClusterError(RuntimeError):
    """The cluster is not in a state to bench (not up, unhealthy, a node that does not come back)."""


def compose(*args: str, stdin: bytes | None = None, timeout: float = 120, check: bool = True,
            settings: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    """cluster/compose.sh with the environment's settings, and `settings` over them."""
    env = {**os.environ, **settings} if settings else None
    done = subprocess.run([COMPOSE, *args], input=stdin, capture_output=True, timeout=timeout, cwd=ROOT, env=env)
    if check and done.returncode != 0:
        raise ClusterError(f"compose {' '.join(args[:3])} exited {done.returncode}: "
                           f"{done.stderr.decode(errors='replace').strip()[-400:]}")
    return done


def backend() -> str:
    return os.environ.get("BACKEND") or "compose"


def host_exec(host: str, argv: list[str], stdin: bytes | None = None, timeout: float = 120,
              check: bool = True, user: str | None = None) -> subprocess.CompletedProcess:
    """Runs argv on a host of the bench as the user its processes run as (or `user`)."""
    if backend() != "vagrant":
        as_user = ["--user", user] if user else []
        return compose("exec", "-T", *as_user, host, *argv, stdin=stdin, timeout=timeout, check=check)
    done = subprocess.run([VM, "exec", host, user or HOST_USERS[host], *argv], input=stdin, capture_output=True,
                          timeout=timeout, cwd=ROOT)
    if check and done.returncode != 0:
        raise ClusterError(f"{host}: {' '.join(argv[:3])} exited {done.returncode}: "
                           f"{done.stderr.decode(errors='replace').strip()[-400:]}")
    return done


def unhealthy_services() -> list[str]:
    """The services of the bench that are not running and healthy ([] when all are)."""
    if backend() == "vagrant":
        done = subprocess.run([VM, "unhealthy"], capture_output=True, text=True, timeout=120, cwd=ROOT)
        return done.stdout.split() if done.returncode in (0, 1) else list(SERVICES)
    done = compose("ps", "--all", "--format", "json", check=False)
    if done.returncode != 0:
        return list(SERVICES)
    text = done.stdout.decode().strip()
    rows = json.loads(text) if text.startswith("[") else [json.loads(line) for line in text.splitlines() if line]
    healthy = {r["Service"] for r in rows if r.get("State") == "running" and r.get("Health") == "healthy"}
    return [s for s in SERVICES if s not in healthy]


def compose_version() -> str:
    done = subprocess.run(["docker", "compose", "version", "--short"], capture_output=True, text=True)
    return done.stdout.strip() or "unknown"


def backend_version() -> str:
    """What runs the hosts: Compose's version, or Vagrant's and its provider."""
    if backend() != "vagrant":
        return f"Compose {compose_version()}"
    done = subprocess.run(["vagrant", "--version"], capture_output=True, text=True)
    # kvm, or qemu: software emulation where KVM cannot boot guests (cluster/vagrant/host.sh driver).
    driver_file = ROOT / ".capbench" / "vagrant" / "libvirt-driver"
    driver = os.environ.get("VAGRANT_LIBVIRT_DRIVER") or (driver_file.read_text().strip() if driver_file.exists()
                                                          else "kvm")
    return f"{done.stdout.strip() or 'Vagrant'} (libvirt, driver {driver})"


def node_info(node: str) -> dict | None:
    """What the node's JVM actually runs with (the webapp's /info: GC in use, heap, CPUs, versions)."""
    done = host_exec(node, ["curl", "-fsS", "--max-time", "3", "http://127.0.0.1:8080/info"], check=False,
                     timeout=30)
    try:
        return json.loads(done.stdout) if done.returncode == 0 else None
    except ValueError:
        return None


class LoadHost:
    def exec(self, argv: list[str], stdin: bytes | None = None, timeout: float = 120, check: bool = True) -> bytes:
        return host_exec("load", argv, stdin=stdin, timeout=timeout, check=check).stdout

    def put(self, path: str, data: bytes) -> None:
        self.exec(["sh", "-c", f'mkdir -p "$(dirname "{path}")" && cat > "{path}"'], stdin=data)

    def put_binary(self, local: Path, path: str) -> None:
        self.put(path, local.read_bytes())
        self.exec(["chmod", "755", path])

    def run_step(self, step_dir: str, argv: list[str], timeout: float) -> tuple[dict[str, bytes], Envelope]:
        """Runs a generator under run-step; returns the files it left (by name) and the envelope."""
        self.exec([RUN_STEP, step_dir, *argv], timeout=timeout)
        archive = self.exec(["tar", "-C", step_dir, "-c", "."], timeout=60)
        self.exec(["rm", "-rf", step_dir])
        files = {}
        with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
            for member in tar.getmembers():
                if member.isfile():
                    files[Path(member.name).name] = tar.extractfile(member).read()
        return files, Envelope.parse(files["envelope"].decode())

    def stop_step(self, step_dir: str) -> None:
        """Stops a step's generator that is still running (after an interrupt); quiet when there is none."""
        self.exec(["sh", "-c", f'kill "$(cat "{step_dir}/pid" 2>/dev/null)" 2>/dev/null; rm -rf "{step_dir}"'],
                  timeout=30, check=False)

    def nodes_answering(self, url: str, count: int) -> dict[str, int]:
        """Sends `count` requests one after another; how many each node answered."""
        script = f'for i in $(seq {count}); do curl -fsS --max-time 10 "{url}"; echo; done'
        seen: dict[str, int] = {}
        for line in self.exec(["sh", "-c", script], timeout=30 + count).decode().splitlines():
            if line.strip():
                node = json.loads(line).get("node", "?")
                seen[node] = seen.get(node, 0) + 1
        return seen


def lb_api(command: str) -> str:
    return host_exec("lb", ["/opt/capbench/bin/lb-api", command]).stdout.decode()


def requests_in_nodes() -> int:
    """Requests HAProxy has queued for, or in progress on, the nodes right now (its `show stat` counters)."""
    lines = lb_api("show stat").splitlines()
    header = lines[0].lstrip("# ").split(",")
    for line in lines[1:]:
        row = dict(zip(header, line.split(",")))
        if row.get("pxname") == "nodes" and row.get("svname") == "BACKEND":
            return int(row["qcur"] or 0) + int(row["scur"] or 0)
    raise ClusterError("HAProxy's show stat has no BACKEND row for nodes")


def set_rotation(nodes_in: tuple[str, ...]) -> None:
    """Puts `nodes_in` in the balancer's rotation and every other node in maintenance."""
    for node in NODES:
        state = "ready" if node in nodes_in else "maint"
        answer = lb_api(f"set server nodes/{node} state {state}").strip()
        if answer:
            raise ClusterError(f"HAProxy refused to set {node} {state}: {answer}")


def nodes_up() -> set[str]:
    """The nodes HAProxy's health checks hold running (srv_op_state 2 in `show servers state`)."""
    rows = [line.split() for line in lb_api("show servers state nodes").splitlines()[2:] if line.strip()]
    return {row[3] for row in rows if len(row) > 5 and row[5] == "2"}


def wait_until_up(nodes: tuple[str, ...], timeout_s: float = 30) -> None:
    """Waits until the health checks hold every one of `nodes` running: a node that failed its checks while
    overloaded (its own search's last steps) needs a few seconds to pass them again before it takes traffic."""
    deadline = time.monotonic() + timeout_s
    while not set(nodes) <= nodes_up() and time.monotonic() < deadline:
        time.sleep(0.5)


def still_down(nodes: tuple[str, ...], timeout_s: float) -> list[str]:
    """Those of `nodes` HAProxy's checks do not hold running after waiting up to timeout_s for them."""
    wait_until_up(nodes, timeout_s)
    up = nodes_up()
    return [node for node in nodes if node not in up]


def set_weights(weights: dict[str, int]) -> None:
    """Sets each node's balancer weight through the runtime API (no restart; HAProxy keeps its state)."""
    for node, weight in weights.items():
        answer = lb_api(f"set weight nodes/{node} {weight}").strip()
        if answer:
            raise ClusterError(f"HAProxy refused weight {weight} for {node}: {answer}")


def recreate_balancer(settings: dict[str, str]) -> None:
    """Re-creates the balancer with these settings over the current ones (e.g. LB_BALANCE=leastconn, which
    the runtime API cannot change) and waits until it is healthy. The nodes keep running."""
    if backend() == "vagrant":
        done = subprocess.run([VAGRANT_UP, "lb"], env={**os.environ, **settings}, capture_output=True,
                              timeout=240, cwd=ROOT)
        if done.returncode != 0:
            raise ClusterError(f"the lb VM did not take {settings}: {done.stderr.decode(errors='replace')[-400:]}")
        return
    compose("up", "--detach", "--no-build", "--no-deps", "--wait", "--wait-timeout", "120", "lb",
            settings=settings, timeout=240)


def java_pid(node: str) -> str:
    """The pid of the node's JVM on its host (the one process whose executable is java)."""
    script = 'for d in /proc/[0-9]*; do case "$(readlink "$d/exe" 2>/dev/null)" in */java) echo "${d#/proc/}"; ' \
             'exit 0;; esac; done; exit 1'
    done = host_exec(node, ["sh", "-c", script], check=False, timeout=30)
    pid = done.stdout.decode().strip()
    if done.returncode != 0 or not pid.isdigit():
        raise ClusterError(f"no java process found on {node}")
    return pid


def thread_dump(node: str, pid: str) -> str:
    """One thread dump of the node's JVM (jattach, the JVM's attach API: what jcmd Thread.print prints)."""
    return host_exec(node, ["jattach", pid, "threaddump"], timeout=30).stdout.decode(errors="replace")
