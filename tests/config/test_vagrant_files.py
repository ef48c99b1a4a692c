"""The Vagrant backend's files: Vagrant accepts the Vagrantfile, and a VM of each role is provisioned by the
very script its container image runs (one source for both)."""
from __future__ import annotations

import json
import re
import shutil

import pytest

from capbench.hosts import topology
from conftest import ROOT, compose, run

ROLES = ("node", "lb", "load", "controller")


@pytest.mark.skipif(shutil.which("vagrant") is None,
                    reason="Vagrant is not installed (make vagrant-setup installs it on Debian; README.md says how elsewhere)")
def test_vagrant_validate_accepts_the_vagrantfile(tmp_path):
    # Vagrant state of its own: machines of yours that are up (and locked by a vagrant command) stay out of it.
    done = run(["vagrant", "validate"], env={"VAGRANT_DOTFILE_PATH": str(tmp_path)})
    assert "validated successfully" in done.stdout


@pytest.mark.docker  # Compose renders compose.yaml: on the cluster's worker (tests/conftest.py)
@pytest.mark.skipif(shutil.which("ruby") is None, reason="Ruby is not installed (Vagrant brings it)")
def test_the_vagrantfile_the_compose_file_and_haproxy_have_the_hosts_of_the_topology():
    """cluster/topology.env is the one list of hosts: the Vagrantfile computes its VMs from it; compose.yaml and
    haproxy.cfg, which describe the stack, must have one service (one server) per host it lists."""
    # The Vagrantfile's HOSTS as Ruby computes them (Vagrant.configure stubbed out: no Vagrant needed).
    script = ('module Vagrant; def self.configure(*); end; end; load ARGV[0]; require "json"; '
              'puts JSON.generate(HOSTS.transform_values { |h| h[:role] })')
    vagrant = json.loads(run(["ruby", "-e", script, str(ROOT / "Vagrantfile")]).stdout)
    expected = {**{node: "node" for node in topology.NODES}, "lb": "lb", "load": "load", "controller": "controller"}
    assert vagrant == expected
    services = json.loads(compose("config", "--format", "json").stdout)["services"]
    # And the shared database, which only the Compose backend runs so far (capbench/hosts/stack.py, the Vagrantfile).
    assert sorted(services) == sorted([*topology.HOSTS, "db"])
    assert services["lb"]["environment"]["LB_NODES"] == " ".join(topology.NODES)  # its servers (haproxy/start)


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
