"""A machine calibration recorded with every run: our machines differ by several times in CPU speed, silently,
so a capacity means little without the speed of the machine it was measured on. At the start of a run, on an
idle cluster:
- each node grinds one fixed request (CPU and garbage: the allocating Grinder at level 13) PROBE_CALLS times in
  a row, straight from the load host, and the servlet's own time per call is taken (the median of the last
  MEASURED_CALLS: the first ones run before the JIT compiler has caught up). It prices the servlet's work (the
  capacity per calibrated core, capbench/analysis/calibration.py), but it is not the machine's speed: each JVM settles on
  its own compiled code, and on one machine a node's figure came out 0.96, 1.26, 1.38 or 1.48 ms as its JVM
  was restarted (the nodes' median 1.00-1.42 ms over six restarts);
- so each node also times a native CPU probe (hashing NODE_PROBE_MB MB, NODE_PROBE_RUNS times): its CPU time,
  which neither a JIT nor the node's CPU quota nor another process holding the core stretches. The nodes'
  median of it is what tells one machine from another (capbench/analysis/calibration.py);
- the load host times a fixed CPU probe of its own (hashing 64 MB).
Nodes that run an executable JAR (APP_JAR) have no Grinder: only the CPU probes run there.
All of it goes into run.json and summary.json, and from there into the history, where runs whose calibrations
differ are flagged (report/)."""
from __future__ import annotations

import json
import os
import platform
import statistics
import subprocess
from concurrent.futures import ThreadPoolExecutor

from capbench.engine.progress import say
from capbench.hosts.backend import ClusterError, backend
from capbench.hosts.cluster_settings import grinder_path, has_grinder

PROBE_VARIANT, PROBE_LEVEL = "v1-nosync", 13
PROBE_CALLS = 300
MEASURED_CALLS = 200
LOAD_PROBE_RUNS = 3
NODE_PROBE_MB, NODE_PROBE_RUNS = 32, 3
# Per run one line "user sys" (s): bash's `time` of the pipeline, written to stdout.
NODE_PROBE = (f'TIMEFORMAT="%3U %3S"; for run in $(seq {NODE_PROBE_RUNS}); do '
              f'{{ time (head -c {NODE_PROBE_MB * 1048576} /dev/zero | sha256sum >/dev/null); }} 2>&1; done')
NODE_PROBES_AT_ONCE = 8
LOAD_PROBE = ("s=$(date +%s%N); head -c 67108864 /dev/zero | sha256sum >/dev/null; e=$(date +%s%N); "
              "echo $(( (e - s) / 1000 ))")  # µs


def probe_description() -> str:
    return (f"median servlet time of the last {MEASURED_CALLS} of {PROBE_CALLS} sequential /grind "
            f"variant={PROBE_VARIANT} level={PROBE_LEVEL} calls per node at idle; node CPU: CPU time of sha256 "
            f"of {NODE_PROBE_MB} MB on each node, median of {NODE_PROBE_RUNS}; load host: sha256 of 64 MB, "
            f"median of {LOAD_PROBE_RUNS}")


def probe_script(nodes: tuple[str, ...]) -> str:
    """One shell script for the load host (one exec: each costs about two seconds through Compose): per node,
    PROBE_CALLS calls over one connection, each answer on a line after the node's name; then the load probe's
    runs, each after "load"."""
    parts = []
    for node in nodes if has_grinder() else ():  # nodes that run an executable JAR: the CPU probe alone
        url = f"http://{node}:8080{grinder_path()}/grind?variant={PROBE_VARIANT}&level={PROBE_LEVEL}"
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
        if not has_grinder():
            per_node[node] = None
            continue
        if len(values) != PROBE_CALLS:
            say(f"warning: calibration of {node}: {len(values)} of {PROBE_CALLS} calls answered")
        per_node[node] = round(statistics.median(values[-MEASURED_CALLS:]), 3) if len(values) == PROBE_CALLS else None
    return per_node, (round(statistics.median(load), 1) if load else None)


def parse_node_probe(text: str) -> float | None:
    """The median CPU time (ms, user + system) of the node probe's runs; None unless every run reported."""
    runs = []
    for line in text.splitlines():
        try:
            user, system = map(float, line.split())
        except ValueError:
            continue
        runs.append(1000 * (user + system))
    return round(statistics.median(runs), 1) if len(runs) == NODE_PROBE_RUNS else None


def probe_nodes(nodes: tuple[str, ...]) -> dict[str, float | None]:
    """Each node's native CPU probe, several nodes at once (they are timed by CPU, so they do not disturb each
    other's figures)."""
    def one(node: str) -> float | None:
        try:
            done = backend().exec(node, ["bash", "-c", NODE_PROBE], timeout=120, check=True)
        except (ClusterError, subprocess.TimeoutExpired) as problem:
            say(f"warning: the CPU probe could not run on {node}: {problem}")
            return None
        figure = parse_node_probe(done.stdout.decode(errors="replace"))
        if figure is None:
            say(f"warning: the CPU probe on {node} did not report its {NODE_PROBE_RUNS} runs")
        return figure
    with ThreadPoolExecutor(max_workers=min(NODE_PROBES_AT_ONCE, len(nodes) or 1)) as pool:
        return dict(zip(nodes, pool.map(one, nodes)))


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
    cpu = probe_nodes(nodes)
    result = {"probe": probe_description(), "ms_per_call": per_node, "node_cpu_ms": cpu, "load_ms": load_ms,
              "machine": machine()}
    calls = ", ".join(f"{node} {ms} ms" for node, ms in per_node.items())
    probes = ", ".join(f"{node} {ms} ms" for node, ms in cpu.items())
    say(f"calibration: {calls} per call; CPU probe {probes}; load host {load_ms} ms")
    if not has_grinder():
        say("  (no ms per call: nodes that run an executable JAR have no Grinder to time; the CPU probe tells "
            "machines apart)")
    elif grinder_path():
        say("  (the ms per call are the Grinder's, beside your application: they say nothing of what your requests "
            "cost; the CPU probe tells machines apart)")
    return result
