"""What a run was: run.json's fields that readers interpret (the nodes, their profile values), in one place.
A node's profile keys are its name in capitals (node2's CPU quota is NODE2_CPUS in cluster_settings)."""
from __future__ import annotations

RUN_SCHEMA = "capbench-run/1"
# Runs recorded before run.json listed its nodes had these three, and before it named its backend ran on this one.
EARLIER_NODES = ("node1", "node2", "node3")
EARLIER_BACKEND = "compose"


def nodes_of(run: dict) -> tuple[str, ...]:
    """The nodes the run had, in order."""
    return tuple(run.get("nodes") or EARLIER_NODES)


def backend_of(run: dict) -> str:
    return run.get("backend") or EARLIER_BACKEND


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


def db_cpus(run: dict) -> dict[str, float]:
    """The database host's CPU quota (the profile's DB_CPUS) as {"db": cores}; {} where it has none (its whole
    machine) or the run had no database."""
    try:
        cpus = float(run.get("cluster_settings", {}).get("DB_CPUS") or 0)
    except ValueError:
        cpus = 0.0
    return {"db": cpus} if cpus > 0 else {}


def node_cpus(run: dict) -> dict[str, float]:
    """The cores each node may use: its CPU quota (NODEn_CPUS), or where the profile sets none (0, the hosts
    profile: each node its whole machine) the processors its JVM saw at the run's start. A node with neither is
    left out."""
    nodes = nodes_of(run)
    quotas = node_numbers(run.get("cluster_settings", {}), "CPUS", nodes)
    seen = run.get("nodes") if isinstance(run.get("nodes"), dict) else {}
    cpus = {}
    for node in nodes:
        processors = (seen.get(node) or {}).get("available_processors")
        if quotas.get(node):
            cpus[node] = quotas[node]
        elif processors:
            cpus[node] = float(processors)
    return cpus
