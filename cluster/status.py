#!/usr/bin/env python3
"""Prints one row per capbench host: its state and health, the CPU quota and memory limit the container runs
with, and for the nodes what the JVM itself reports (heap, garbage collector in use, processors it counts)
and how HAProxy sees the node (weight, status). Reads only; uses the Python standard library."""
from __future__ import annotations

import csv
import io
import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
COMPOSE = [str(ROOT / "cluster" / "compose.sh")]
SERVICES = ["node1", "node2", "node3", "lb", "load", "controller"]


def run(args: list[str]) -> str:
    """Runs a command and returns its output, or "" when it fails (a host that is down has no answers)."""
    done = subprocess.run(args, capture_output=True, text=True, timeout=30)
    return done.stdout if done.returncode == 0 else ""


def compose_ps() -> dict[str, dict]:
    rows = {}
    for line in run(COMPOSE + ["ps", "--all", "--format", "json"]).splitlines():
        if line.strip():
            entry = json.loads(line)
            rows[entry["Service"]] = entry
    return rows


def inspect(container_id: str) -> dict:
    return json.loads(run(["docker", "inspect", container_id]) or "[{}]")[0]


def env_of(container: dict) -> dict[str, str]:
    pairs = (item.partition("=") for item in container.get("Config", {}).get("Env") or [])
    return {key: value for key, _, value in pairs}


def container_limits(container: dict) -> tuple[str, str]:
    host = container.get("HostConfig", {})
    nano_cpus, memory = host.get("NanoCpus") or 0, host.get("Memory") or 0
    cpus = f"{nano_cpus / 1e9:.2f}" if nano_cpus else "-"
    mem = f"{memory // 2**20}MiB" if memory else "-"
    return cpus, mem


def node_info(service: str) -> dict:
    out = run(COMPOSE + ["exec", "-T", service, "curl", "-fsS", "--max-time", "3", "http://127.0.0.1:8080/info"])
    return json.loads(out) if out.strip() else {}


def balancer_view() -> dict[str, tuple[str, str]]:
    """Each node's (weight, status) as HAProxy reports them through its runtime API."""
    out = run(COMPOSE + ["exec", "-T", "lb", "/opt/capbench/bin/lb-api", "show stat"])
    rows = csv.DictReader(io.StringIO(out.lstrip("# ")))
    return {r["svname"]: (r["weight"], r["status"]) for r in rows if r.get("pxname") == "nodes"}


def ports(entry: dict) -> str:
    published = [f"{p['URL']}:{p['PublishedPort']}->{p['TargetPort']}"
                 for p in entry.get("Publishers") or [] if p.get("PublishedPort")]
    return ",".join(published) or "-"


def main() -> int:
    ps = compose_ps()
    if not ps:
        print("capbench: no capbench containers (make up starts them)")
        return 1
    lb = balancer_view()
    header = ["SERVICE", "STATE", "HEALTH", "CPUS", "MEMORY", "HEAP", "GC", "JVM CPUS", "LB WEIGHT", "LB STATUS",
              "PUBLISHED"]
    table = [header]
    for service in SERVICES:
        entry = ps.get(service)
        if entry is None:
            table.append([service, "absent"] + ["-"] * (len(header) - 2))
            continue
        container = inspect(entry["ID"])
        cpus, mem = container_limits(container)
        heap = gc = jvm_cpus = "-"
        weight, lb_status = lb.get(service, ("-", "-"))
        if service.startswith("node") and entry.get("State") == "running":
            info = node_info(service)
            if info:
                # The -Xmx the node was given, and the part the JVM reports usable (less a survivor space).
                heap = f"{env_of(container).get('JVM_HEAP', '?')} ({int(info['heap_max_bytes']) // 2**20}MiB)"
                gc, jvm_cpus = info["gc"], str(info["available_processors"])
        table.append([service, entry.get("State", "?"), entry.get("Health") or "-", cpus, mem, heap, gc, jvm_cpus,
                      weight, lb_status, ports(entry)])
    widths = [max(len(row[i]) for row in table) for i in range(len(header))]
    for row in table:
        print("  ".join(cell.ljust(width) for cell, width in zip(row, widths)).rstrip())
    return 0


if __name__ == "__main__":
    sys.exit(main())
