"""The Vagrant backend for real, on libvirt, with VM names, a bench network and Vagrant state of its own
(capbench-it-*, 10.89.3.0/24, a temporary VAGRANT_DOTFILE_PATH), so VMs of yours are untouched:
- the lb VM: `vagrant up lb` from the box of make vagrant-box, provisioned by cluster/provision/lb.sh (the
  script its image runs), then the run's settings applied by cluster/vagrant/up.sh; it must serve, with HAProxy
  and pmcd as user haproxy and Debian's own services masked; then `vagrant destroy -f`;
- all six VMs, one QUICK `make bench-cluster` on them, destroy.
Both need KVM. Where this machine's KVM cannot boot guests (cluster/vagrant/host.sh driver says qemu: software
emulation) they are skipped with that reason: the one lb VM took 10-11 minutes to come up and be provisioned
in CI, a quarter of the suite's budget, holding one of the two cores the other worker's benches measure on; six
take tens of minutes, and what they measure says nothing about real VMs. CAPBENCH_VAGRANT_EMULATED=1 runs them
anyway. Skipped too, with the reason, where Vagrant or its libvirt plugin is missing (make vagrant-setup installs
them on Debian). A missing box is a failure: make vagrant-setup builds it."""
from __future__ import annotations

import functools
import json
import os
import shutil
import subprocess
import time

import pytest

from capbench.hosts.topology import HOSTS, NODES
from conftest import ROOT, assert_capacity_from_the_steps, run

BOX = "debian/bookworm64"


@functools.cache
def vagrant_missing() -> str | None:
    if shutil.which("vagrant") is None:
        return "Vagrant is not installed (make vagrant-setup installs it on Debian; README.md says how elsewhere)"
    plugins = subprocess.run(["vagrant", "plugin", "list"], capture_output=True, text=True).stdout
    if "vagrant-libvirt" not in plugins:
        return "the vagrant-libvirt plugin is not installed (make vagrant-setup installs it on Debian)"
    return None


@functools.cache  # the probe boots the box for 15 s: once per worker
def kvm_missing() -> str | None:
    if os.environ.get("CAPBENCH_VAGRANT_EMULATED") == "1" or vagrant_missing() is not None:
        return None
    driver = subprocess.run([str(ROOT / "cluster" / "vagrant" / "host.sh"), "driver"], capture_output=True,
                            text=True).stdout.strip()
    if driver == "kvm":
        return None
    return (f"KVM cannot boot guests on this machine (cluster/vagrant/host.sh driver: {driver or 'none'}, software "
            "emulation): an emulated VM takes over 10 minutes to provision and measures nothing real; "
            "CAPBENCH_VAGRANT_EMULATED=1 runs it anyway")


pytestmark = [pytest.mark.skipif(vagrant_missing() is not None, reason=f"Vagrant backend: {vagrant_missing()}"),
              pytest.mark.skipif(kvm_missing() is not None, reason=f"{kvm_missing()}")]


@pytest.fixture(scope="module")
def vagrant_env(tmp_path_factory):
    """The test's own Vagrant state; libvirtd running, the box there, the driver probed. Destroys every VM of
    that state at the end, whatever happened."""
    state = tmp_path_factory.mktemp("vagrant")
    boxes = run(["vagrant", "box", "list"]).stdout
    assert any(line.startswith(f"{BOX} ") and "libvirt" in line for line in boxes.splitlines()), \
        f"no libvirt box {BOX}: make vagrant-box (make vagrant-setup runs it)\n{boxes}"
    run(["cluster/vagrant/host.sh", "ensure"], timeout=600)
    driver = run(["cluster/vagrant/host.sh", "driver"], timeout=300).stdout.strip()
    env = {"VAGRANT_DOTFILE_PATH": str(state / "dot"), "VAGRANT_VM_PREFIX": "capbench-it",
           "VAGRANT_BENCH_NET": "10.89.3", "BENCH_NET_PREFIX": "10.89.3", "BACKEND": "vagrant",
           "VAGRANT_LIBVIRT_DRIVER": driver, "STATS_PORT": "0"}
    yield env
    run(["vagrant", "destroy", "-f"], env=env, timeout=900, check=False)


def vagrant_up(env: dict[str, str], *hosts: str) -> float:
    began = time.monotonic()
    up = run(["vagrant", "up", "--provider", "libvirt", *hosts], env=env, timeout=3600, check=False)
    took = time.monotonic() - began
    print(f"vagrant up {' '.join(hosts) or '(all)'} ({env['VAGRANT_LIBVIRT_DRIVER']}): {took:.0f} s")
    assert up.returncode == 0, f"vagrant up failed:\n{up.stdout[-3000:]}\n{up.stderr[-3000:]}"
    return took


def on(env: dict[str, str], host: str, user: str, *argv: str) -> str:
    return run(["cluster/vagrant/vm.sh", "exec", host, user, *argv], env=env, timeout=120).stdout


def test_lb_vm_is_provisioned_by_its_role_script_and_serves(vagrant_env):
    env = vagrant_env
    vagrant_up(env, "lb")
    applied = run(["cluster/vagrant/up.sh", "lb"], env={**env, "UP_TIMEOUT": "300"}, timeout=600)
    assert "lb: restarted" in applied.stderr and "healthy" in applied.stderr, applied.stderr
    # Applying the same settings again changes nothing.
    again = run(["cluster/vagrant/up.sh", "lb"], env=env, timeout=600)
    assert "lb: unchanged" in again.stderr, again.stderr
    # What the container runs, as the container's user; Debian's own services of those packages masked.
    processes = on(env, "lb", "root", "ps", "-eo", "user=,comm=").split("\n")
    owners = {line.split()[1]: line.split()[0] for line in processes if len(line.split()) == 2}
    assert owners.get("haproxy") == "haproxy" and owners.get("pmcd") == "haproxy", owners
    for unit in ("haproxy.service", "pmcd.service", "pmlogger.service"):
        state = run(["cluster/vagrant/vm.sh", "exec", "lb", "root", "systemctl", "is-enabled", unit], env=env,
                    check=False).stdout.strip()
        assert state == "masked", (unit, state)
    # The balancer knows the nodes by their bench addresses, from /etc/hosts (not the management network's DNS).
    servers = run(["cluster/lb-api.sh", "show servers state nodes"], env=env).stdout
    addresses = {row.split()[3]: row.split()[4] for row in servers.splitlines()[2:] if len(row.split()) > 4}
    assert addresses == {"node1": "10.89.3.11", "node2": "10.89.3.12", "node3": "10.89.3.13"}, servers
    # The stats page needs the generated password.
    stats = on(env, "lb", "haproxy", "curl", "-s", "-o", "/dev/null", "-w", "%{http_code}",
               "http://127.0.0.1:8404/stats")
    assert stats == "401", stats


def test_vagrant_up_then_quick_bench_cluster_on_the_vms(vagrant_env, tmp_path):
    env = vagrant_env
    vagrant_up(env)
    status = run(["vagrant", "status", "--machine-readable"], env=env).stdout
    states = {row.split(",")[1]: row.split(",")[3] for row in status.splitlines()
              if row.split(",")[2:3] == ["state"]}
    assert states == {host: "running" for host in HOSTS}, states

    began = time.monotonic()
    done = run(["make", "--no-print-directory", "bench-cluster", "QUICK=1"],
               env={**env, "RESULTS_DIR": str(tmp_path), "LOADGEN": "oha"}, timeout=3600)
    print(f"make bench-cluster QUICK=1 on the VMs: {time.monotonic() - began:.0f} s")
    print(done.stdout[-2500:])
    (run_dir,) = [p for p in tmp_path.iterdir() if p.is_dir()]
    run_json = json.loads((run_dir / "run.json").read_text())
    summary = json.loads((run_dir / "summary.json").read_text())
    assert run_json["backend"] == "vagrant" and run_json["backend_version"].startswith("Vagrant")
    assert summary["status"] == "complete"
    steps = [json.loads(line) for line in (run_dir / "steps.jsonl").read_text().splitlines()]
    for target in (*NODES, "cluster"):
        assert_capacity_from_the_steps(steps, target, summary["targets"][target]["capacity_rps"])
    for node in NODES:
        info = run_json["nodes"][node]
        assert info and info["node"] == node, info
    # PCP archives of every monitored host came from the controller VM, and the steps have host figures.
    for host in (*NODES, "lb", "load"):
        assert list((run_dir / "pcp" / host).glob("*.meta*")), host
    steps = [json.loads(line) for line in (run_dir / "steps.jsonl").read_text().splitlines()]
    measured = [s for s in steps if s.get("host_metrics")]
    assert measured and set(NODES) <= set(measured[0]["host_metrics"])
    assert (run_dir / "report.html").is_file()
