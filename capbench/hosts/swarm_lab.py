"""A multi-engine swarm on one machine, for tests and demos: n Docker engines in containers (the engine image,
cluster/images/engine.Dockerfile) on one internal network, joined into a swarm, and the hosts file that places
the roles on them. Each engine's socket sits in a folder of this checkout, so the harness reaches every engine
as it reaches a real machine's: by its DOCKER_HOST.

    python3 -m capbench.hosts.swarm_lab up N      (make swarm-lab HOSTS=N)     N engines, the swarm, the hosts file
    python3 -m capbench.hosts.swarm_lab down      (make swarm-lab-down)        engines, volumes, network, hosts file gone

The join token travels in an API request's body, never on a command line. LAB_NAME names the lab (the
tests run their own beside a user's); roles: the first engine is the manager with the controller, each node
gets an engine of its own while there are engines, and spare engines take the database, the load hosts, then the
balancer (each on the manager's where none is left); load hosts beyond the spare engines go one to an engine from
the manager's backwards (load on the manager's, load2 on the last …), so that two load hosts share an engine only
in a lab of one, and the first node's machine runs nothing else while there are engines enough."""
from __future__ import annotations

import argparse
import http.client
import json
import os
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

from capbench.hosts import swarm_hosts, topology
from capbench.hosts.topology import DATABASE, ROOT

ENGINE_IMAGE = "capbench-engine:latest"
ENGINE_DOCKERFILE = ROOT / "cluster" / "images" / "engine.Dockerfile"
MAX_ENGINES = 8
LAB_SUBNET = "10.88.0.0/24"  # apart from the bench networks (10.89.x) and Docker's default pools (172.17+)
MARK = "# written by make swarm-lab"
CGROUP_PARENT = "/capbench-lab"  # engine.Dockerfile's --cgroup-parent
# What an engine in a container needs, and no more: --privileged is refused on our machines.
ENGINE_RIGHTS = ["--cap-add", "ALL", "--cap-drop", "SYS_RESOURCE", "--security-opt", "seccomp=unconfined",
                 "--security-opt", "apparmor=unconfined", "-v", "/sys/fs/cgroup:/sys/fs/cgroup:rw", "--tmpfs", "/run"]


def lab_name() -> str:
    return os.environ.get("LAB_NAME") or "capbench-lab"


def socket_dir(lab: str) -> Path:
    return ROOT / ".capbench" / "swarm" / lab


def say(text: str) -> None:
    print(f"capbench: swarm lab: {text}", flush=True)


def run(*argv: str, check: bool = True, stdin: bytes | None = None, timeout: float = 600) -> str:
    done = subprocess.run(argv, input=stdin, capture_output=True, timeout=timeout)
    if check and done.returncode != 0:
        raise SystemExit(f"capbench: swarm lab: {' '.join(argv[:4])} exited {done.returncode}: "
                         f"{done.stderr.decode(errors='replace').strip()[-400:]}")
    return done.stdout.decode().strip()


class EngineAPI(http.client.HTTPConnection):
    """The Engine API over a UNIX socket (for the one call whose body holds a secret: swarm join)."""

    def __init__(self, path: Path) -> None:
        super().__init__("localhost", timeout=60)
        self.socket_path = str(path)

    def connect(self) -> None:
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.settimeout(60)
        self.sock.connect(self.socket_path)


def roles_for(count: int) -> list[list[str]]:
    """The roles of each engine: see the module's docstring."""
    engines: list[list[str]] = [["controller"]] + [[] for _ in range(count - 1)]
    workers = list(range(1, count)) or [0]
    for i, node in enumerate(topology.NODES):
        engines[workers[i % len(workers)]].append(node)
    spare = list(range(1 + len(topology.NODES), count))
    engines[spare.pop(0) if spare else 0].append(DATABASE)
    # Beyond the spare engines: the manager's, then from the last engine backwards, each engine without a load host
    # first.
    backwards = [0, *range(count - 1, 0, -1)]
    for j, load in enumerate(topology.LOAD_HOSTS):
        if spare:
            engines[spare.pop(0)].append(load)
            continue
        free = [i for i in backwards if not any(role in topology.LOAD_HOSTS for role in engines[i])]
        engines[free[0] if free else backwards[j % count]].append(load)
    engines[spare.pop(0) if spare else 0].append("lb")
    return engines


def build_image() -> None:
    if subprocess.run(["docker", "image", "inspect", ENGINE_IMAGE], capture_output=True).returncode == 0:
        return
    say(f"building {ENGINE_IMAGE} (Debian's docker.io)")
    # An empty context: the Dockerfile copies nothing.
    run("docker", "build", "--quiet", "--tag", ENGINE_IMAGE, "-", stdin=ENGINE_DOCKERFILE.read_bytes())


def start_engine(lab: str, index: int) -> Path:
    name, host = f"{lab}-{index}", f"lab{index}"
    sockets = socket_dir(lab) / host
    sockets.mkdir(parents=True, exist_ok=True)
    if run("docker", "ps", "--quiet", "--filter", f"name=^{name}$", check=False):
        return sockets / "docker.sock"
    run("docker", "rm", "--force", name, check=False)
    run("docker", "volume", "create", "--label", f"capbench.lab={lab}", name)  # the engine's images and state
    run("docker", "run", "--detach", "--name", name, "--hostname", host, "--network", lab, *ENGINE_RIGHTS,
        "--label", f"capbench.lab={lab}", "-v", f"{name}:/var/lib/docker", "-v", f"{sockets}:/engine",
        ENGINE_IMAGE)
    return sockets / "docker.sock"


def wait_engine(sock: Path, timeout: float = 90) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if sock.exists() and run("docker", "--host", f"unix://{sock}", "info", "--format", "{{.ID}}", check=False):
            return
        time.sleep(1)
    raise SystemExit(f"capbench: swarm lab: the engine at {sock} did not answer within {timeout:.0f} s")


def address(lab: str, index: int) -> str:
    return run("docker", "inspect", "--format", f'{{{{(index .NetworkSettings.Networks "{lab}").IPAddress}}}}',
               f"{lab}-{index}")


def swarm_state(sock: Path) -> str:
    return run("docker", "--host", f"unix://{sock}", "info", "--format", "{{.Swarm.LocalNodeState}}")


def join(sock: Path, manager_sock: Path, manager_address: str, own_address: str) -> None:
    token = run("docker", "--host", f"unix://{manager_sock}", "swarm", "join-token", "--quiet", "worker")
    api = EngineAPI(sock)
    body = json.dumps({"ListenAddr": "0.0.0.0:2377", "AdvertiseAddr": own_address,
                       "RemoteAddrs": [f"{manager_address}:2377"], "JoinToken": token})
    api.request("POST", "/swarm/join", body=body, headers={"Content-Type": "application/json"})
    answer = api.getresponse()
    if answer.status != 200:
        raise SystemExit(f"capbench: swarm lab: joining {sock.parent.name} failed: {answer.status} "
                         f"{answer.read().decode(errors='replace')[:300]}")


def up(count: int) -> None:
    lab = lab_name()
    build_image()
    if lab not in run("docker", "network", "ls", "--format", "{{.Name}}").split():
        run("docker", "network", "create", "--internal", "--subnet", LAB_SUBNET, "--label", f"capbench.lab={lab}", lab)
    sockets = [start_engine(lab, i) for i in range(1, count + 1)]
    for sock in sockets:
        wait_engine(sock)
    manager_address = address(lab, 1)
    if swarm_state(sockets[0]) != "active":
        run("docker", "--host", f"unix://{sockets[0]}", "swarm", "init", "--advertise-addr", manager_address)
    for index, sock in enumerate(sockets[1:], 2):
        if swarm_state(sock) != "active":
            join(sock, sockets[0], manager_address, address(lab, index))
    roles = roles_for(count)
    lines = [MARK, "# machine  engine  roles"]
    lines += [f"lab{i}  unix://{sock}  {' '.join(roles[i - 1])}" for i, sock in enumerate(sockets, 1)]
    target = swarm_hosts.path()
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text("\n".join(lines) + "\n")
    say(f"{count} engines in a swarm; roles in {target}:")
    print("\n".join(lines[2:]))
    print(run("docker", "--host", f"unix://{sockets[0]}", "node", "ls"))


def down() -> None:
    lab = lab_name()
    for name in run("docker", "ps", "--all", "--quiet", "--filter", f"label=capbench.lab={lab}",
                    check=False).split():
        run("docker", "rm", "--force", "--volumes", name, check=False)
    for volume in run("docker", "volume", "ls", "--quiet", "--filter", f"label=capbench.lab={lab}",
                      check=False).split():
        run("docker", "volume", "rm", "--force", volume, check=False)
    if lab in run("docker", "network", "ls", "--format", "{{.Name}}", check=False).split():
        run("docker", "network", "rm", lab)
    shutil.rmtree(socket_dir(lab), ignore_errors=True)
    if not run("docker", "ps", "--all", "--quiet", "--filter", "label=capbench.lab", check=False):
        # The engines' cgroup parent (engine.Dockerfile), shared by every lab: gone with the last one.
        for parent in Path("/sys/fs/cgroup").glob(f"*/{CGROUP_PARENT.strip('/')}"):
            try:
                parent.rmdir()
            except OSError:
                pass
    target = swarm_hosts.path()
    if target.is_file() and target.read_text().startswith(MARK):
        target.unlink()
    say(f"{lab} removed")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python3 -m capbench.hosts.swarm_lab", description=__doc__.split("\n")[0])
    verbs = parser.add_subparsers(dest="verb", required=True)
    up_verb = verbs.add_parser("up")
    up_verb.add_argument("count", help=f"engines, 1 to {MAX_ENGINES}")
    verbs.add_parser("down")
    args = parser.parse_args(argv)
    if args.verb == "down":
        down()
        return 0
    if not args.count.isdigit() or not 1 <= int(args.count) <= MAX_ENGINES:
        print(f"capbench: HOSTS='{args.count}' is not allowed: a whole number of engines from 1 to {MAX_ENGINES}",
              file=sys.stderr)
        return 2
    up(int(args.count))
    return 0


if __name__ == "__main__":
    sys.exit(main())
