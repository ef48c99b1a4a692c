"""compose.yaml rendered for `docker stack deploy`: compose.yaml stays the one description of the stack, and this
turns Compose's resolved form (`docker compose config --format json`, settings applied) into what Swarm takes.

What Swarm ignores or needs, and what is done about it:
- `cpus`/`mem_limit` → `deploy.resources.limits` (and the memory as a reservation, so placement counts it);
  `pids_limit` → `deploy.resources.limits.pids`.
- `build` and `depends_on` conditions are dropped: images reach the machines beforehand (capbench/hosts/swarm_images.py)
  and HAProxy follows nodes by DNS as they come (haproxy.cfg's resolvers).
- each role placed by a node label (`node.labels.capbench.<role> == true`) that `make up` sets from the hosts file;
- `endpoint_mode: dnsrr`: between engines an overlay carries traffic by task address, not through a service's
  virtual IP (a service's virtual IP between engines did not carry traffic on our machines), and HAProxy and the pmloggers reach hosts by name anyway;
- the bench network becomes an internal, attachable overlay with the same subnet (pmcd admits only it);
- no published port: Swarm's ingress publishes on every machine's every address and host mode on every address
  of one machine, so the stats page is reached through a tunnel on the manager's loopback instead (make stats);
- `security_opt` (no-new-privileges) has no Swarm equivalent: the images' processes run as unprivileged users
  with every capability dropped, which Swarm keeps.
- the shared database (service db, /query) runs where the hosts file places the role `db`, joined to the nodes by
  the data network as an overlay (its alias `database` kept), the password a Swarm secret made from the same
  file, PostgreSQL's shared memory a tmpfs (Swarm has no `shm_size`) and its data on a volume of that machine
  (PostgreSQL writes to the machine's disk, not through the task's copy-on-write layer); without the role
  neither runs and the nodes answer /query 503;
- the nodes are not restarted by Swarm (as with Compose): a killed node stays down until the harness starts it,
  so a failover measures HAProxy, not Swarm's restart delay; nor is any task replaced for a failing health
  check (HEALTH_RETRIES)."""
from __future__ import annotations

import re
from pathlib import PurePosixPath

from capbench.hosts import topology
from capbench.hosts.swarm_hosts import SwarmHosts
from capbench.hosts.topology import DATABASE

STACK_FORMAT = "3.9"
# The secrets a stack hands out: the database's password. TLS's certificates and authority (compose.yaml's
# lb_tls, capbench_ca, each node's nodeN_tls) are the Compose backend's alone so far (docs/guides/tls.md).
SWARM_SECRETS = ("db_password",)
# Swarm replaces a task whose health check fails (Compose only reports it): re-creating the balancer made the
# load host's and the controller's checks (which reach it) fail and Swarm restarted both mid-bench, and an
# overloaded node would be killed the same way. The checks stay (make up waits until each passes once), with
# more retries than any run lasts (3 s apart: about a month).
HEALTH_RETRIES = 1_000_000
# A Go duration as `docker compose config` writes one ("6m15s", "1h0m0s", "500ms").
GO_DURATION = re.compile(r"(\d+(?:\.\d+)?)(h|ms|us|µs|ns|m|s)")
GO_UNIT_S = {"h": 3600, "m": 60, "s": 1, "ms": 1e-3, "us": 1e-6, "µs": 1e-6, "ns": 1e-9}


def duration_s(text: str) -> float:
    """A Go duration in seconds; a bare number is seconds."""
    if re.fullmatch(r"\d+(\.\d+)?", text):
        return float(text)
    parts = GO_DURATION.findall(text)
    if not parts or "".join(n + u for n, u in parts) != text:
        raise ValueError(f"'{text}' is not a duration")
    return sum(float(number) * GO_UNIT_S[unit] for number, unit in parts)


def start_window_s(rendered: dict) -> float:
    """The longest start period of the nodes' health checks (each node's start window, cluster/compose/compose.sh):
    how long a bring-up waits for them at least."""
    periods = [duration_s(str(service["healthcheck"]["start_period"])) for name, service in rendered["services"].items()
               if name in topology.NODES and "start_period" in service.get("healthcheck", {})]
    return max(periods, default=0.0)
LABEL_PREFIX = "capbench."
# The shared database and the network that joins the nodes to it: left out where no machine runs the database.
WITH_DATABASE = (DATABASE, "data")
KEPT = ("image", "hostname", "environment", "healthcheck", "cap_drop", "command", "entrypoint")
# Where the database keeps its data (db/start's home): a volume of its machine.
DATA_VOLUMES = {DATABASE: ("db-data", "/var/lib/capbench-db")}


def placement_label(role: str) -> str:
    return f"{LABEL_PREFIX}{role}"


def render(config: dict, hosts: SwarmHosts, registry: str = "") -> dict:
    """The stack file for `docker stack deploy`, from `docker compose config --format json`."""
    left_out = () if hosts.database else WITH_DATABASE
    services = {}
    for name, service in config["services"].items():
        if name in left_out:
            continue
        if not any(name in machine.roles for machine in hosts.machines):
            raise ValueError(f"compose.yaml's service '{name}' has no machine in {hosts.path}")
        out = {key: service[key] for key in KEPT if service.get(key) not in (None, [], {})}
        if "healthcheck" in out:
            out["healthcheck"] = {**out["healthcheck"], "retries": HEALTH_RETRIES}
        if registry:
            out["image"] = f"{registry.rstrip('/')}/{service['image']}"
        out["networks"] = {net: ({"aliases": joined["aliases"]} if (joined or {}).get("aliases") else None)
                           for net, joined in (service.get("networks") or {}).items()
                           if net in _swarm_networks(config, left_out)}
        if name in topology.NODES:
            _find_peers_by_dns(name, out, [node for node in config["services"] if node in topology.NODES])
        handed = [x for x in service.get("secrets") or [] if x["source"] in SWARM_SECRETS]
        if hosts.database and handed:  # a file in /run/secrets, as Compose mounts it
            out["secrets"] = [{"source": x["source"], "target": PurePosixPath(x.get("target") or x["source"]).name}
                              for x in handed]
        out["volumes"] = _volumes(name, service)
        if not out["volumes"]:
            del out["volumes"]
        limits: dict[str, object] = {}
        reservations: dict[str, object] = {}
        if service.get("cpus"):
            limits["cpus"] = f"{float(service['cpus']):g}"
        if service.get("mem_limit"):
            limits["memory"] = reservations["memory"] = str(service["mem_limit"])
        if service.get("pids_limit"):
            limits["pids"] = int(service["pids_limit"])
        out["deploy"] = {
            "replicas": 1,
            "endpoint_mode": "dnsrr",
            "placement": {"constraints": [f"node.labels.{placement_label(name)} == true"]},
            "resources": {"limits": limits, "reservations": reservations},
            "restart_policy": {"condition": "none" if name in topology.NODES else "any", "delay": "1s"},
        }
        services[name] = out
    networks = {}
    for name, network in _swarm_networks(config, left_out).items():
        networks[name] = {"driver": "overlay", "internal": True, "attachable": True}
        subnets = [c for c in (network.get("ipam") or {}).get("config") or [] if c.get("subnet")]
        if subnets:
            networks[name]["ipam"] = {"config": [{"subnet": c["subnet"]} for c in subnets]}
    stack = {"version": STACK_FORMAT, "services": services, "networks": networks}
    if hosts.database:
        stack["secrets"] = {name: {"file": secret["file"]} for name, secret in (config.get("secrets") or {}).items()
                            if name in SWARM_SECRETS}
        stack["volumes"] = {volume: {} for name, (volume, _) in DATA_VOLUMES.items() if name in services}
    return stack


def _find_peers_by_dns(node: str, out: dict, nodes: list[str]) -> None:
    """A node's task may come back at a new address, and the nodes start one after another, so replication finds
    its members by DNS, asked again at every heartbeat (tomcat-conf/render-config.sh): the name peers-of-NODE,
    which every other node answers to on the bench network. Not one name for all: Tomcat would know itself among
    its addresses only by the first address of its host name, which Swarm lists on both networks in either order."""
    out["environment"] = {**out.get("environment", {}), "DNS_MEMBERSHIP_SERVICE_NAME": f"peers-of-{node}"}
    bench = out["networks"].get("bench") or {}
    out["networks"]["bench"] = {**bench, "aliases": [*bench.get("aliases", []),
                                                     *(f"peers-of-{peer}" for peer in nodes if peer != node)]}


def _volumes(name: str, service: dict) -> list[dict]:
    """Its data volume, and Compose's shm_size as a tmpfs on /dev/shm."""
    mounts = []
    if name in DATA_VOLUMES:
        volume, target = DATA_VOLUMES[name]
        mounts.append({"type": "volume", "source": volume, "target": target})
    if service.get("shm_size"):
        mounts.append({"type": "tmpfs", "target": "/dev/shm", "tmpfs": {"size": int(service["shm_size"])}})
    return mounts


def _swarm_networks(config: dict, left_out: tuple[str, ...]) -> dict:
    """The internal networks: the bench network, and the data network where the database runs. `edge` only
    publishes the stats port, which Swarm does not."""
    return {name: net for name, net in (config.get("networks") or {}).items()
            if net.get("internal") and name not in left_out}
