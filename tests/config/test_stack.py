"""compose.yaml rendered for Swarm (capbench/hosts/stack.py): for every profile, a stack file the docker CLI accepts, each
role pinned to its machine's label, the profile's limits carried into deploy.resources, the bench network an
internal overlay with the subnet pmcd admits, and nothing published; with a db role, the database on the data
network as Compose runs it (its alias, the password's secret, its shared memory) and its data on a volume."""
from __future__ import annotations

import json
import subprocess

import pytest

from capbench.hosts import stack, swarm_images
from capbench.hosts.swarm_hosts import parse
from capbench.hosts.topology import HOSTS, NODES
from conftest import ROOT, compose

pytestmark = pytest.mark.docker  # runs Docker's CLI: on the cluster's worker (tests/conftest.py)

PROFILES = sorted(p.stem for p in (ROOT / "cluster" / "profiles").glob("*.env"))
HOSTS_FILE = parse("m1 unix:///m1.sock controller lb load\nm2 unix:///m2.sock node1 node2\n"
                   "m3 unix:///m3.sock node3\n", ROOT / "hosts")
WITH_DB = parse("m1 unix:///m1.sock controller lb load\nm2 unix:///m2.sock node1 node2\n"
                "m3 unix:///m3.sock node3\nm4 unix:///m4.sock db\n", ROOT / "hosts")


def rendered(profile: str, registry: str = "", hosts=HOSTS_FILE) -> dict:
    config = json.loads(compose("config", "--format", "json", env={"PROFILE": profile}).stdout)
    return stack.render(config, hosts, registry)


@pytest.mark.parametrize("hosts", [HOSTS_FILE, WITH_DB], ids=["no db", "db"])
@pytest.mark.parametrize("profile", PROFILES)
def test_every_profile_renders_a_stack_the_docker_cli_accepts(profile, hosts):
    document = rendered(profile, hosts=hosts)
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
        assert service["cap_drop"] == ["ALL"] and set(service["networks"]) == {"bench"}
        assert "secrets" not in service  # no database here, so no password to hand out
        # Swarm kills a task whose check fails: a bench must not lose its load host while the balancer restarts.
        assert service["healthcheck"]["retries"] >= 100_000 and service["healthcheck"]["test"] == \
            config[host]["healthcheck"]["test"]
    for node in NODES:
        assert float(document["services"][node]["deploy"]["resources"]["limits"]["cpus"]) == config[node]["cpus"]
        # A killed node stays down until the harness starts it, as on Compose.
        assert document["services"][node]["deploy"]["restart_policy"]["condition"] == "none"


def test_each_node_finds_its_replication_peers_by_a_name_only_the_others_answer_to():
    services = rendered("small")["services"]
    for node in NODES:
        assert services[node]["environment"]["DNS_MEMBERSHIP_SERVICE_NAME"] == f"peers-of-{node}"
        assert services[node]["networks"]["bench"]["aliases"] == [f"peers-of-{peer}" for peer in NODES if peer != node]
    assert all(services[host]["networks"] == {"bench": None} for host in HOSTS if host not in NODES)


def test_the_bench_network_is_an_internal_overlay_with_the_subnet_pmcd_admits_and_edge_is_gone():
    document = rendered("small")
    assert document["networks"] == {"bench": {"driver": "overlay", "internal": True, "attachable": True,
                                              "ipam": {"config": [{"subnet": "10.89.0.0/24"}]}}}
    pcp = document["services"]["node1"]["environment"]["PCP_ALLOW_HOSTS"]
    assert pcp == "10.89.0.*"


def test_with_a_db_role_the_database_joins_the_nodes_on_the_data_network_as_on_compose():
    document = rendered("small", hosts=WITH_DB)
    db, node1 = document["services"]["db"], document["services"]["node1"]
    assert db["deploy"]["placement"]["constraints"] == ["node.labels.capbench.db == true"]
    assert db["networks"] == {"bench": None, "data": {"aliases": ["database"]}}
    assert set(node1["networks"]) == {"bench", "data"} and node1["networks"]["data"] is None
    assert document["services"]["lb"]["networks"] == {
        "bench": None}
    assert document["networks"]["data"] == {"driver": "overlay", "internal": True, "attachable": True,
                                            "ipam": {"config": [{"subnet": "10.90.0.0/24"}]}}
    for service in (db, node1):
        assert service["secrets"] == [{"source": "db_password", "target": "db_password"}]
    assert document["secrets"] == {"db_password": {"file": str(ROOT / ".capbench" / "secrets" / "db_password")}}
    assert db["volumes"] == [{"type": "volume", "source": "db-data", "target": "/var/lib/capbench-db"},
                             {"type": "tmpfs", "target": "/dev/shm", "tmpfs": {"size": 128 * 2**20}}]
    assert document["volumes"] == {"db-data": {}} and "volumes" not in node1


def test_a_registry_names_every_image_by_it():
    document = rendered("small", registry="manager:5000/")
    assert {s["image"].split("/")[0] for s in document["services"].values()} == {"manager:5000"}


def test_without_a_registry_every_image_is_named_by_its_id_and_keeps_its_name_in_a_label():
    """Swarm's agent skips its pull attempt only for an image named by ID (capbench/hosts/swarm_images.py)."""
    document = swarm_images.by_id(rendered("small"))
    for host, service in document["services"].items():
        name = service["deploy"]["labels"][swarm_images.IMAGE_LABEL]
        assert name == f"capbench-{'node' if host in NODES else host}:latest"
        built = subprocess.run(["docker", "image", "inspect", "--format", "{{.Id}}", name], capture_output=True,
                               text=True, timeout=60, check=True).stdout.strip()
        assert service["image"] == built and built.startswith("sha256:")
    named = rendered("small", registry="manager:5000")
    assert swarm_images.by_id(named, registry="manager:5000") == named
