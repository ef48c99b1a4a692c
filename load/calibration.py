"""A machine calibration recorded with every run: our machines differ by several times in CPU speed, silently,
so a capacity means little without the speed of the machine it was measured on. At the start of a run, on an
idle cluster, each node grinds one fixed request (CPU and garbage: the allocating Grinder at level 13) PROBE_CALLS
times in a row, straight from the load host, and the servlet's own time per call is taken (the median of the
last MEASURED_CALLS: the first ones run before the JIT compiler has caught up); the load host times a fixed CPU
probe of its own (hashing 64 MB). Both go into run.json and summary.json, and from there into the history,
where runs whose calibrations differ are flagged (report/)."""
from __future__ import annotations

import json
import os
import platform
import statistics

from hosts.backend import ClusterError
from load.progress import say

PROBE_VARIANT, PROBE_LEVEL = "v1-nosync", 13
PROBE_CALLS = 300
MEASURED_CALLS = 200
LOAD_PROBE_RUNS = 3
LOAD_PROBE = ("s=$(date +%s%N); head -c 67108864 /dev/zero | sha256sum >/dev/null; e=$(date +%s%N); "
              "echo $(( (e - s) / 1000 ))")  # µs


def probe_description() -> str:
    return (f"median servlet time of the last {MEASURED_CALLS} of {PROBE_CALLS} sequential /grind "
            f"variant={PROBE_VARIANT} level={PROBE_LEVEL} calls per node at idle; load host: sha256 of 64 MB, "
            f"median of {LOAD_PROBE_RUNS}")


def probe_script(nodes: tuple[str, ...]) -> str:
    """One shell script for the load host (one exec: each costs about two seconds through Compose): per node,
    PROBE_CALLS calls over one connection, each answer on a line after the node's name; then the load probe's
    runs, each after "load"."""
    parts = []
    for node in nodes:
        url = f"http://{node}:8080/grind?variant={PROBE_VARIANT}&level={PROBE_LEVEL}"
        urls = " ".join([f"'{url}'"] * PROBE_CALLS)
        parts.append(f"curl -sS --max-time 10 -w '\\n' {urls} | sed -n 's/^{{/{node} {{/p'")
    parts.extend([f"echo load $({LOAD_PROBE})"] * LOAD_PROBE_RUNS)
    return "; ".join(parts)


def parse_probe(text: str, nodes: tuple[str, ...]) -> tuple[dict[str, float | None], float | None]:
    """Per node the median servlet time of its last MEASURED_CALLS calls (None unless every call was
    answered), and the load probe's median (ms)."""
    times: dict[str, list[float]] = {node: [] for node in nodes}
    load: list[float] = []
    for line in text.splitlines():
        name, _, rest = line.partition(" ")
        if name == "load" and rest.strip().isdigit():
            load.append(int(rest) / 1000.0)
        elif name in times:
            try:
                times[name].append(float(json.loads(rest)["grind_ms"]))
            except (ValueError, KeyError):
                pass
    per_node = {}
    for node, values in times.items():
        if len(values) != PROBE_CALLS:
            say(f"warning: calibration of {node}: {len(values)} of {PROBE_CALLS} calls answered")
        per_node[node] = round(statistics.median(values[-MEASURED_CALLS:]), 3) if len(values) == PROBE_CALLS else None
    return per_node, (round(statistics.median(load), 1) if load else None)


def machine() -> str:
    """The machine the harness runs on: its CPU model, CPUs and name."""
    model = "unknown CPU"
    try:
        with open("/proc/cpuinfo") as cpuinfo:
            model = next((line.split(":", 1)[1].strip() for line in cpuinfo if line.startswith("model name")), model)
    except OSError:
        pass
    return f"{model} × {os.cpu_count()} on {platform.node()}"


def calibrate(host, nodes: tuple[str, ...]) -> dict:
    try:
        text = host.exec(["sh", "-c", probe_script(nodes)], timeout=300, check=False).decode(errors="replace")
    except ClusterError as problem:
        say(f"warning: the calibration could not run on the load host: {problem}")
        text = ""
    per_node, load_ms = parse_probe(text, nodes)
    result = {"probe": probe_description(), "ms_per_call": per_node, "load_ms": load_ms, "machine": machine()}
    calls = ", ".join(f"{node} {ms} ms" for node, ms in result["ms_per_call"].items())
    say(f"calibration: {calls} per call; load host {result['load_ms']} ms")
    return result
