"""What a run was: run.json, typed (RunRecord), and the readings of its fields (the nodes, their profile
values), in one place. A node's profile keys are its name in capitals (node2's CPU quota is NODE2_CPUS in
cluster_settings)."""
from __future__ import annotations

from dataclasses import asdict, dataclass
from pathlib import Path

from capbench.rundata import jsonl
from capbench.rundata.records import doc, known

RUN_SCHEMA = "capbench-run/1"
# Runs recorded before run.json listed its nodes had these three, and before it named its backend ran on this one.
EARLIER_NODES = ("node1", "node2", "node3")
EARLIER_BACKEND = "compose"


@dataclass
class RunRecord:
    """run.json, written when the run starts. Every field has a default: a run.json that is missing or
    damaged reads as the empty record, and a field added later reads as unknown in an older run's."""
    run_id: str = doc("<UTC time>-<git sha>[-dirty]-<kind>, the folder's name", default="")
    kind: str = doc("the bench kind (kinds/)", default="")
    settings: dict = doc("every bench setting, as checked (capbench/settings/bench.py)", default_factory=dict)
    driver: dict = doc("the load generator: name, version line, binary", default_factory=dict)
    load_hosts: dict[str, str] | None = doc("each load host's tool version", default=None)
    profile: str | None = doc("the cluster profile's name", default=None)
    cluster_settings: dict[str, str] = doc("the profile and Tomcat tunables as the cluster ran them (NODE2_CPUS: "
                                           "node2's CPU quota), never the credentials", default_factory=dict)
    backend: str = doc("where the cluster ran (compose, swarm, hosts)", default=EARLIER_BACKEND)
    backend_version: str | None = doc("the backend's version line", default=None)
    compose_version: str | None = doc("Compose's version, in runs from before backend_version", default=None)
    targets: list[str] = doc("what the kind measures", default_factory=list)
    harness: dict[str, str] = doc("python and host of the harness", default_factory=dict)
    git_sha: str | None = doc("the checkout's commit, -dirty with uncommitted changes", default=None)
    nodes: dict[str, dict] = doc("each node's /info at the start: gc, heap_max_bytes, available_processors, "
                                 "java_version, server; {}: from before it was recorded", default_factory=dict)
    calibration: dict | None = doc("the machine's calibration at the start (capbench/analysis/calibration.py)", default=None)
    testbed_ceiling: dict | None = doc("the direct check of the testbed's ceiling this run used: steps on HAProxy's "
                                       "own answer, what they carried and their CPU a request "
                                       "(capbench/engine/ceiling_probe.py); None: not checked", default=None)
    tls: dict | None = doc("TLS=lb, both or node: where TLS ended, the certificates' SHA-256 fingerprints (never a "
                           "key), what the first load host's connection negotiated and, with both, the balancer's to a "
                           "node, with node the node the client reached (node_leg; capbench/load/tls_facts.py); in the "
                           "benches that report, handshake_cost: per host that ended the run's TLS, the CPU ms a new "
                           "connection's full handshake cost it (capbench/engine/handshake_probe.py); None: clear "
                           "text", default=None)
    node_http: dict | None = doc("NODE_HTTP=2: the HTTP the balancer spoke to the node that answered a probe, and the "
                                 "protocol that node saw the request in (capbench/load/node_http_facts.py); None: "
                                 "HTTP/1.1 to the nodes", default=None)
    started_epoch: float | None = doc("when the run started", default=None)

    @classmethod
    def from_json(cls, data: dict) -> RunRecord:
        return cls(**known(cls, data))

    def to_json(self) -> dict:
        """run.json as written: the schema, then the fields (compose_version only in the runs that had it)."""
        data = asdict(self)
        if data["compose_version"] is None:
            del data["compose_version"]
        return {"schema": RUN_SCHEMA, **data}

    @classmethod
    def read(cls, path: Path) -> RunRecord:
        return cls.from_json(jsonl.read_json(path) or {})


def nodes_of(run: RunRecord) -> tuple[str, ...]:
    """The nodes the run had, in order."""
    return tuple(run.nodes) or EARLIER_NODES


def node_values(cluster_settings: dict[str, str], field: str, nodes: tuple[str, ...]) -> dict[str, str]:
    """Each node's value of one profile field (CPUS, MEM, HEAP, GC, WEIGHT, MAXCONN), where the settings have it."""
    keys = {node: f"{node.upper()}_{field}" for node in nodes}
    return {node: cluster_settings[key] for node, key in keys.items() if key in cluster_settings}


def node_numbers(cluster_settings: dict[str, str], field: str, nodes: tuple[str, ...]) -> dict[str, float]:
    """node_values as numbers; a node whose value is missing or not a number is left out."""
    numbers = {}
    for node, text in node_values(cluster_settings, field, nodes).items():
        try:
            numbers[node] = float(text)
        except ValueError:
            pass
    return numbers


def db_cpus(run: RunRecord) -> dict[str, float]:
    """The database host's CPU quota (the profile's DB_CPUS) as {"db": cores}; {} where it has none (its whole
    machine) or the run had no database."""
    try:
        cpus = float(run.cluster_settings.get("DB_CPUS") or 0)
    except ValueError:
        cpus = 0.0
    return {"db": cpus} if cpus > 0 else {}


def node_cpus(run: RunRecord) -> dict[str, float]:
    """The cores each node may use: its CPU quota (NODEn_CPUS), or where the profile sets none (0, the hosts
    profile: each node its whole machine) the processors its JVM saw at the run's start. A node with neither is
    left out."""
    nodes = nodes_of(run)
    quotas = node_numbers(run.cluster_settings, "CPUS", nodes)
    cpus = {}
    for node in nodes:
        processors = (run.nodes.get(node) or {}).get("available_processors")
        if quotas.get(node):
            cpus[node] = quotas[node]
        elif processors:
            cpus[node] = float(processors)
    return cpus
