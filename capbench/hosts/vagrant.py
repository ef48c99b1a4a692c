"""The Vagrant backend: each host a VM of the Vagrantfile, reached over plain SSH as the user its processes run as
(cluster/vagrant/vm.sh). Settings are applied to the running VMs by cluster/vagrant/up.sh; faults go through
systemd (SIGKILL and a stop, or SIGSTOP/SIGCONT) and a kill is timed by systemd's own record of the exit; PCP's
tools run on the controller VM (the user's machine may have no Docker)."""
from __future__ import annotations

import io
import os
import subprocess
import tarfile
import time
from datetime import datetime, timezone
from pathlib import Path

from capbench.hosts import netfault, stats_tunnel, topology
from capbench.hosts.backend import BackendError, ClusterError, Delay, Done, LostMachine
from capbench.hosts.topology import ROOT, role

VM = str(ROOT / "cluster" / "vagrant" / "vm.sh")
UP = str(ROOT / "cluster" / "vagrant" / "up.sh")
DRIVER_FILE = ROOT / ".capbench" / "vagrant" / "libvirt-driver"
# The user each role's processes run as: the units' User= (the images' USER on containers).
ROLE_USERS = {"node": "tomcat", "lb": "haproxy", "load": "capbench", "controller": "capbench"}
ANSWER_WAIT_S = 20  # SSH to a VM that is gone waits for its connection timeout
NODE_UNIT = "capbench-node.service"  # cluster/vagrant/units/capbench-node.service


class Vagrant:
    name = "vagrant"
    built = "artifacts"  # the VMs install the WAR, oha and the JMX agent from the checkout
    setup = "vagrant-setup"  # Vagrant, libvirt, QEMU, the box
    database = False  # no VM for it yet (db/README.md)
    live_cpus = False  # a VM's CPUs are its own
    own_node_images = False  # the VMs install the one application the checkout names

    def __init__(self) -> None:
        if len(topology.LOAD_HOSTS) > 1:  # the Vagrantfile has one load VM, and emulated VMs could not carry more here
            raise BackendError(f"LOAD_HOSTS='{len(topology.LOAD_HOSTS)}' is not allowed on VMs: the Vagrantfile has one load "
                               "host; use 1 here, or BACKEND=compose or BACKEND=swarm for several")

    @staticmethod
    def running() -> bool:
        return subprocess.run([VM, "running"], capture_output=True, cwd=ROOT).returncode == 0

    def exec(self, host: str, argv: list[str], stdin: bytes | None = None, timeout: float = 120,
             check: bool = True, user: str | None = None) -> subprocess.CompletedProcess:
        done = subprocess.run([VM, "exec", host, user or ROLE_USERS[role(host)], *argv], input=stdin,
                              capture_output=True, timeout=timeout, cwd=ROOT)
        if check and done.returncode != 0:
            raise ClusterError(f"{host}: {' '.join(argv[:3])} exited {done.returncode}: "
                               f"{done.stderr.decode(errors='replace').strip()[-400:]}")
        return done

    def unhealthy(self) -> list[str]:
        done = subprocess.run([VM, "unhealthy"], capture_output=True, text=True, timeout=120, cwd=ROOT)
        return done.stdout.split() if done.returncode in (0, 1) else list(topology.HOSTS)

    def version(self) -> str:
        done = subprocess.run(["vagrant", "--version"], capture_output=True, text=True)
        # kvm, or qemu: software emulation where KVM cannot boot guests (cluster/vagrant/host.sh driver).
        driver = os.environ.get("VAGRANT_LIBVIRT_DRIVER") or (DRIVER_FILE.read_text().strip()
                                                              if DRIVER_FILE.exists() else "kvm")
        return f"{done.stdout.strip() or 'Vagrant'} (libvirt, driver {driver})"

    def lock_id(self) -> str:
        return "vagrant-" + os.environ.get("VAGRANT_VM_PREFIX", "capbench")

    def up(self) -> int:
        return subprocess.run([UP], cwd=ROOT).returncode

    def recreate(self, hosts: tuple[str, ...], settings: dict[str, str], fresh: bool = False) -> None:
        for host in hosts:
            done = subprocess.run([UP, host], env={**os.environ, **settings}, capture_output=True, timeout=240,
                                  cwd=ROOT)
            if done.returncode != 0:
                raise ClusterError(f"the {host} VM did not take {settings}: "
                                   f"{done.stderr.decode(errors='replace')[-400:]}")
        for host in hosts:
            if fresh and host.startswith("node"):  # the VM stays; its node's JVM starts anew
                self._systemctl(host, "restart")

    def _systemctl(self, node: str, *args: str) -> str:
        return self.exec(node, ["systemctl", *args, NODE_UNIT], user="root", timeout=60).stdout.decode()

    def set_cpus(self, node: str, cpus: str) -> bool:
        return False  # a VM's CPUs are its own

    def fault(self, node: str, fault: str, action: str, delay: Delay | None = None) -> Done:
        before = time.time()
        if fault in netfault.FAULTS:  # the VM's own kernel, as root; SSH comes in on another interface
            script = netfault.script(fault, action, self._bench_address(node), delay)
            done = self.exec(node, ["sh", "-s"], stdin=script.encode(), user="root", timeout=60, check=False)
            return netfault.done(done, fault, action, node, before, time.time())
        if (fault, action) == ("kill", "inject"):
            self._systemctl(node, "kill", "--signal=SIGKILL")
            self._systemctl(node, "stop")  # cancels the restart systemd would make 2 s later
        elif (fault, action) == ("kill", "recover"):
            self._systemctl(node, "start", "--no-block")
        else:
            self._systemctl(node, "kill", f"--signal={'SIGSTOP' if action == 'inject' else 'SIGCONT'}")
        after = time.time()
        exited = self._exit_time(node) if (fault, action) == ("kill", "inject") else None
        if exited is not None and before - 1 <= exited <= after + 1:
            return Done(exited, 0.0, "systemd's exit timestamp of the JVM (the VM's clock)")
        return Done((before + after) / 2, round((after - before) / 2, 3), "the middle of the ssh call")

    @staticmethod
    def _bench_address(node: str) -> str:
        """The node's address on the bench network, as the Vagrantfile gives it (nodeN: .10+N)."""
        prefix = os.environ.get("VAGRANT_BENCH_NET") or "10.89.2"
        return f"{prefix}.{10 + int(node.removeprefix('node'))}"

    def netem_missing(self, node: str) -> str:
        probe = self.exec(node, ["unshare", "--net", "sh", "-s"], stdin=netfault.NETEM_PROBE.encode(), user="root",
                          timeout=60, check=False)
        return netfault.why_no_netem(probe, node, f"the {node} VM")

    def _exit_time(self, node: str) -> float | None:
        """systemd's record of the JVM's exit, to the microsecond (the VM's clock)."""
        text = self._systemctl(node, "show", "--property=ExecMainExitTimestamp", "--timestamp=us+utc")
        value = text.strip().partition("=")[2]  # e.g. "Mon 2026-11-23 06:50:01.123456 UTC"
        try:
            return datetime.strptime(value, "%a %Y-%m-%d %H:%M:%S.%f UTC").replace(tzinfo=timezone.utc).timestamp()
        except ValueError:
            return None

    def lost_machines(self, hosts: tuple[str, ...]) -> list[LostMachine]:
        """Each host is a VM of its own: one that does not run `true` over SSH within ANSWER_WAIT_S is lost."""
        found = []
        for host in hosts:
            try:
                done = subprocess.run([VM, "exec", host, ROLE_USERS[role(host)], "true"], capture_output=True,
                                      timeout=ANSWER_WAIT_S, cwd=ROOT)
                why = None if done.returncode == 0 else (done.stderr.decode(errors="replace").strip()[-200:]
                                                         or f"exit {done.returncode}")
            except subprocess.TimeoutExpired:
                why = f"no answer within {ANSWER_WAIT_S} s"
            if why is not None:
                vm = f"{os.environ.get('VAGRANT_VM_PREFIX', 'capbench')}-{host}"  # the Vagrantfile's VM name
                found.append(LostMachine(vm, (host,), f"its VM did not answer over SSH ({why})"))
        return found

    def pcp_tools(self, script: str, pcp_dir: Path, out_dir: Path) -> None:
        """The controller VM gets the archives (a tar on stdin) and sends the output back (a tar on stdout)."""
        archives = io.BytesIO()
        with tarfile.open(fileobj=archives, mode="w") as tar:
            for host in sorted(p.name for p in pcp_dir.iterdir() if p.is_dir()):
                tar.add(pcp_dir / host, arcname=host)
        wrapper = ('set -eu; work=$(mktemp -d); trap \'rm -rf "$work"\' EXIT; mkdir "$work/pcp" "$work/out"; '
                   'tar -C "$work/pcp" -x; bash -s "$work" <<\'CAPBENCH_SCRIPT\' >&2\n' + script
                   + 'CAPBENCH_SCRIPT\ntar -C "$work/out" -c .')
        try:
            done = self.exec("controller", ["bash", "-c", wrapper], stdin=archives.getvalue(), timeout=600)
        except (ClusterError, subprocess.TimeoutExpired) as problem:
            raise ClusterError(f"PCP's tools on the controller VM failed: {problem}") from problem
        with tarfile.open(fileobj=io.BytesIO(done.stdout)) as tar:
            tar.extractall(out_dir, filter="data")

    def down(self) -> int:
        return subprocess.run(["vagrant", "halt"], cwd=ROOT).returncode

    def stats(self) -> int:
        """The lb VM publishes nothing (its networks are isolated): a tunnel over SSH."""
        stats_tunnel.run([VM, "exec", "lb", ROLE_USERS["lb"]], int(os.environ.get("STATS_PORT") or 8404))
        return 0

    def logs(self, host: str | None, follow: bool) -> int:
        status = 0
        for name in [host] if host else [h for h in topology.HOSTS if h != "controller"]:
            print(f"---- {name}", flush=True)
            argv = [VM, "exec", name, "root", "journalctl", "-u", f"capbench-{role(name)}", "-n", "200",
                    "--no-pager", *(["--follow"] if follow else [])]
            status = subprocess.run(argv, cwd=ROOT).returncode or status
        return status

    def status(self) -> int:
        subprocess.run(["vagrant", "status"], cwd=ROOT)
        unhealthy = self.unhealthy()
        print("capbench: every host healthy" if not unhealthy else f"capbench: not healthy: {' '.join(unhealthy)}")
        return 0
