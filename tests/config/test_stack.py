"""compose.yaml rendered for Swarm (hosts/stack.py): for every profile, a stack file the docker CLI accepts, each
role pinned to its machine's label, the profile's limits carried into deploy.resources, the bench network an
internal overlay with the subnet pmcd admits, and nothing published."""
from __future__ import annotations

import json
import subprocess

import pytest

from conftest import ROOT, compose
from hosts import stack, swarm_images
from hosts.swarm_hosts import parse
from hosts.topology import HOSTS, NODES

pytestmark = pytest.mark.docker  # runs Docker's CLI: on the cluster's worker (tests/conftest.py)

PROFILES = sorted(p.stem for p in (ROOT / "cluster" / "profiles").glob("*.env"))
HOSTS_FILE = parse("m1 unix:///m1.sock controller lb load\nm2 unix:///m2.sock node1 node2\n"
                   "m3 unix:///m3.sock node3\n", ROOT / "hosts")


def rendered(profile: str, registry: str = "") -> dict:
    config = json.loads(compose("config", "--format", "json", env={"PROFILE": profile}).stdout)
    return stack.render(config, HOSTS_FILE, registry)


@pytest.mark.parametrize("profile", PROFILES)
def test_every_profile_renders_a_stack_the_docker_cli_accepts(profile):
    document = rendered(profile)
    done = subprocess.run(["docker", "stack", "config", "--compose-file", "-"], input=json.dumps(document),
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert "Ignoring unsupported options" not in done.stderr, done.stderr


def test_each_role_is_pinned_reached_by_task_address_and_limited_as_the_profile_says():
    document = rendered("small")
    assert sorted(document["services"]) == sorted(HOSTS)
    config = json.loads(compose("config", "--format", "json").stdout)["services"]
    for host, service in document["services"].items():
        deploy = service["deploy"]
        assert deploy["placement"]["constraints"] == [f"node.labels.capbench.{host} == true"]
        assert deploy["endpoint_mode"] == "dnsrr"
        assert deploy["resources"]["limits"]["memory"] == str(config[host]["mem_limit"])
        assert not {"build", "depends_on", "ports", "cpus", "mem_limit", "security_opt"} & set(service)
        assert service["cap_drop"] == ["ALL"] and service["networks"] == ["bench"]
        # Swarm kills a task whose check fails: a bench must not lose its load host while the balancer restarts.
        assert service["healthcheck"]["retries"] >= 100_000 and service["healthcheck"]["test"] == \
            config[host]["healthcheck"]["test"]
    for node in NODES:
        assert float(document["services"][node]["deploy"]["resources"]["limits"]["cpus"]) == config[node]["cpus"]
        # A killed node stays down until the harness starts it, as on Compose.
        assert document["services"][node]["deploy"]["restart_policy"]["condition"] == "none"


def test_the_bench_network_is_an_internal_overlay_with_the_subnet_pmcd_admits_and_edge_is_gone():
    document = rendered("small")
    assert document["networks"] == {"bench": {"driver": "overlay", "internal": True, "attachable": True,
                                              "ipam": {"config": [{"subnet": "10.89.0.0/24"}]}}}
    pcp = document["services"]["node1"]["environment"]["PCP_ALLOW_HOSTS"]
    assert pcp == "10.89.0.*"


def test_a_registry_names_every_image_by_it():
    document = rendered("small", registry="manager:5000/")
    assert {s["image"].split("/")[0] for s in document["services"].values()} == {"manager:5000"}


def test_without_a_registry_every_image_is_named_by_its_id_and_keeps_its_name_in_a_label():
    """Swarm's agent skips its pull attempt only for an image named by ID (hosts/swarm_images.py)."""
    document = swarm_images.by_id(rendered("small"))
    for host, service in document["services"].items():
        name = service["deploy"]["labels"][swarm_images.IMAGE_LABEL]
        assert name == f"capbench-{'node' if host in NODES else host}:latest"
        built = subprocess.run(["docker", "image", "inspect", "--format", "{{.Id}}", name], capture_output=True,
                               text=True, timeout=60, check=True).stdout.strip()
        assert service["image"] == built and built.startswith("sha256:")
    named = rendered("small", registry="manager:5000")
    assert swarm_images.by_id(named, registry="manager:5000") == named
