"""The Vagrant backend's files: Vagrant accepts the Vagrantfile, and a VM of each role is provisioned by the
very script its container image runs (one source for both)."""
from __future__ import annotations

import re
import shutil

import pytest

from conftest import ROOT, run

ROLES = ("node", "lb", "load", "controller")


@pytest.mark.skipif(shutil.which("vagrant") is None,
                    reason="Vagrant is not installed (make setup installs it on Debian; README.md says how elsewhere)")
def test_vagrant_validate_accepts_the_vagrantfile(tmp_path):
    # Vagrant state of its own: machines of yours that are up (and locked by a vagrant command) stay out of it.
    done = run(["vagrant", "validate"], env={"VAGRANT_DOTFILE_PATH": str(tmp_path)})
    assert "validated successfully" in done.stdout


def test_the_vagrantfile_has_the_hosts_of_compose_yaml():
    vagrantfile = (ROOT / "Vagrantfile").read_text()
    hosts = dict(re.findall(r'^\s+"(\w+)"\s+=> \{ role: "(\w+)"', vagrantfile, re.M))
    assert hosts == {"node1": "node", "node2": "node", "node3": "node", "lb": "lb", "load": "load",
                     "controller": "controller"}
    compose = (ROOT / "compose.yaml").read_text()
    for host in hosts:
        assert re.search(rf"^  {host}:$", compose, re.M), host


@pytest.mark.parametrize("role", ROLES)
def test_vm_and_image_run_the_same_provisioning_script(role):
    script = f"cluster/provision/{role}.sh"
    dockerfile = (ROOT / "cluster" / "images" / f"{role}.Dockerfile").read_text()
    # The image: the script's packages step, then its install step on the copied checkout.
    assert re.search(rf"^RUN /opt/capbench/src/{script} packages$", dockerfile, re.M), dockerfile
    assert re.search(rf"^RUN /opt/capbench/src/{script} install /opt/capbench/src", dockerfile, re.M)
    # The VM: guest.sh runs that script (both steps) on the synced checkout.
    guest = (ROOT / "cluster" / "vagrant" / "guest.sh").read_text()
    assert 'src=/opt/capbench/src' in guest and '"$src/cluster/provision/$role.sh" all "$src"' in guest
    assert re.search(r'synced_folder "\.", "/opt/capbench/src", type: "rsync"', (ROOT / "Vagrantfile").read_text())
