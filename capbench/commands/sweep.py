"""make tune's sweep: which settings to measure, from the make line (MAXTHREADS=4,16,64,200, a grid when several
parameters are given) or a sweep file (SWEEP=sweeps/threads.yaml: a grid, or a list of points), each
point's settings resolved (NODEWEIGHTS=capacity from the last complete bench-cluster in the history) and checked
by the cluster's own rules before anything starts, and the baseline (nothing changed) measured too."""
from __future__ import annotations

import contextlib
import itertools
import os
import re
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from capbench.analysis.balance import capacity_weights
from capbench.hosts import topology
from capbench.hosts.cluster_settings import SettingsRefused, cluster_settings
from capbench.hosts.topology import profile_key
from capbench.rundata import jsonl
from capbench.rundata.layout import history_path

# The sweep's parameters: the name on the make line or in a sweep file, the setting it sets, and its kind.
PARAMETERS = {
    "PROTOCOL": "TOMCAT_PROTOCOL",
    "MAXTHREADS": "TOMCAT_MAX_THREADS",
    "MINSPARETHREADS": "TOMCAT_MIN_SPARE_THREADS",
    "ACCEPTCOUNT": "TOMCAT_ACCEPT_COUNT",
    "MAXCONNECTIONS": "TOMCAT_MAX_CONNECTIONS",
    "MAXKEEPALIVEREQUESTS": "TOMCAT_MAX_KEEP_ALIVE_REQUESTS",
    # HTTP/2 from the balancer to the nodes (1.1 or 2; the balancer is re-created with the nodes) and its tunables
    "NODEHTTP": "NODE_HTTP",
    "H2STREAMS": "TOMCAT_H2_MAX_CONCURRENT_STREAMS",
    "H2STREAMEXECUTION": "TOMCAT_H2_MAX_CONCURRENT_STREAM_EXECUTION",
    "H2WINDOW": "TOMCAT_H2_INITIAL_WINDOW_SIZE",
    "POOLSIZE": "DB_POOL_SIZE",  # the database pool (WORKLOAD=query)
    "POOLTIMEOUT": "DB_POOL_TIMEOUT_MS",
    "POOLSCOPE": "DB_CONNECTION_SCOPE",
    "CACHESIZE": "DB_CACHE_SIZE",  # the node's cache of reads (WORKLOAD=query)
    "CACHETTL": "DB_CACHE_TTL_S",
    "BALANCE": "LB_BALANCE",
    # Each node's NODEn_WEIGHT (not WEIGHTS, bench-cluster's choice of balancings): equal | profile | capacity | a:b:c
    "NODEWEIGHTS": "NODEn_WEIGHT",
    "SERVERMAXCONN": "NODEn_MAXCONN",  # the same maxconn on each node
    # Traffic as production sends it: where TLS ends (the balancer, and the nodes where it changes, re-created),
    # what the clients speak to the balancer and how long their connections live (the harness's: nothing re-created)
    "TLS": "TLS",
    "HTTP": "HTTP",
    "CONNECTIONLIFE": "CONNECTION_LIFE",
}
# Parameters named as the setting they set: a list of values sweeps them, one value is the whole sweep's setting
# (make tune MAXTHREADS=4,64 TLS=lb measures both thread counts with TLS at the balancer).
OWN_NAME = tuple(name for name, setting in PARAMETERS.items() if name == setting)
EACH_NODE = "NODEn_"  # a setting of every node of the bench: NODE1_WEIGHT, NODE2_WEIGHT, ...


def settings_of(name: str) -> list[str]:
    """The settings a parameter sets, a per-node one for each node of the bench (known when the command runs)."""
    setting = PARAMETERS[name]
    if setting.startswith(EACH_NODE):
        return [profile_key(node, setting.removeprefix(EACH_NODE)) for node in topology.NODES]
    return [setting]
BALANCER = ("BALANCE", "NODEWEIGHTS", "SERVERMAXCONN")
TARGETS = ("node1", "cluster")
MAX_POINTS = 64
DEFAULT_ROUNDS, MAX_ROUNDS = 3, 10


class SweepError(ValueError):
    """A sweep that cannot run: every problem, one per line."""


@dataclass
class Point:
    label: str
    values: dict[str, str]  # parameter name → value, as given
    env: dict[str, str] = field(default_factory=dict)  # the settings it sets
    baseline: bool = False

    @property
    def slug(self) -> str:
        return re.sub(r"[^A-Za-z0-9=.,-]+", "_", self.label)[:80]


@dataclass
class Sweep:
    parameters: list[str]
    points: list[Point]
    target: str
    source: str  # the make line's parameters or the sweep file
    rounds: int = DEFAULT_ROUNDS  # every point measured once a round, in a random order (make tune, TUNE_ROUNDS)


def _values(text: str) -> list[str]:
    return [v.strip() for v in str(text).split(",")]


def read_sweep(environ: dict[str, str]) -> Sweep:
    """The sweep from SWEEP=<file> or the make line's parameters (not both), checked for shape; the values
    themselves are checked by cluster/settings.sh (check_points)."""
    given = {name: environ[name] for name in PARAMETERS if environ.get(name, "").strip()
             and (name not in OWN_NAME or "," in environ[name])}
    sweep_file = environ.get("SWEEP", "").strip()
    target = environ.get("TUNE_TARGET", "").strip() or None
    if sweep_file and given:
        raise SweepError(f"give SWEEP={sweep_file} or parameters on the make line ({', '.join(given)}), not both")
    if sweep_file:
        grid, listed, target = _read_file(Path(sweep_file), target)
    elif given:
        grid, listed = {name: _values(value) for name, value in given.items()}, None
    else:
        raise SweepError("nothing to sweep: give SWEEP=<file.yaml> or one or more of "
                         + ", ".join(f"{n}=a,b,..." for n in PARAMETERS) + " (e.g. make tune MAXTHREADS=4,16,64,200)")
    problems = []
    for name, values in (grid or {}).items():
        if not values or any(v == "" for v in values) or len(set(values)) != len(values):
            problems.append(f"{name}='{','.join(values)}' is not allowed: use distinct, comma-separated values")
    if problems:
        raise SweepError("\n".join(problems))
    if grid is not None:
        names = list(grid)
        points = [Point(" ".join(f"{n}={v}" for n, v in zip(names, combo)), dict(zip(names, combo)))
                  for combo in itertools.product(*grid.values())]
    else:
        names = list(dict.fromkeys(n for p in listed for n in p))
        points = [Point(" ".join(f"{n}={v}" for n, v in p.items()), p) for p in listed]
    if len(points) > MAX_POINTS:
        raise SweepError(f"the sweep has {len(points)} points: at most {MAX_POINTS} (each is a capacity search)")
    rounds_text = environ.get("TUNE_ROUNDS", "").strip() or str(DEFAULT_ROUNDS)
    if not rounds_text.isdigit() or not 1 <= int(rounds_text) <= MAX_ROUNDS:
        raise SweepError(f"TUNE_ROUNDS='{rounds_text}' is not allowed: use a whole number of rounds from 1 to "
                         f"{MAX_ROUNDS} (each measures every point once)")
    if target is not None and target not in TARGETS:
        raise SweepError(f"TUNE_TARGET='{target}' is not allowed: use one of {', '.join(TARGETS)}")
    if target is None:
        target = "cluster" if any(n in BALANCER for n in names) else "node1"
    if target == "node1" and any(n in BALANCER for n in names):
        raise SweepError(f"balancer settings ({', '.join(n for n in names if n in BALANCER)}) need "
                         "TUNE_TARGET=cluster: node1 alone is not balanced")
    return Sweep(names, points, target, sweep_file or " ".join(f"{n}={v}" for n, v in given.items()),
                 int(rounds_text))


def _read_file(path: Path, target: str | None) -> tuple[dict | None, list | None, str | None]:
    """A sweep file: `grid: {NAME: [values]}` or `points: [{NAME: value, ...}]`, and optionally `target`."""
    if not path.is_file():
        raise SweepError(f"SWEEP='{path}' is not a file: give a sweep file such as sweeps/threads.yaml")
    try:
        data = yaml.safe_load(path.read_text())
    except yaml.YAMLError as problem:
        raise SweepError(f"SWEEP='{path}' is not valid YAML: {' '.join(str(problem).split())}") from None
    shape = "use 'grid: {MAXTHREADS: [4, 16]}' or 'points: [{MAXTHREADS: 4}, ...]', and optionally 'target: node1'"
    if not isinstance(data, dict) or set(data) - {"grid", "points", "target"} or ("grid" in data) == ("points" in data):
        raise SweepError(f"SWEEP='{path}' has the wrong shape: {shape}")
    unknown = set()
    grid = listed = None
    if "grid" in data:
        if not isinstance(data["grid"], dict) or not all(isinstance(v, list) for v in data["grid"].values()):
            raise SweepError(f"SWEEP='{path}': grid must map each parameter to a list of values: {shape}")
        grid = {str(k).upper(): [str(v) for v in vs] for k, vs in data["grid"].items()}
        unknown = set(grid) - set(PARAMETERS)
    else:
        if not isinstance(data["points"], list) or not data["points"] or not all(isinstance(p, dict) and p
                                                                                for p in data["points"]):
            raise SweepError(f"SWEEP='{path}': points must be a list of settings: {shape}")
        listed = [{str(k).upper(): str(v) for k, v in p.items()} for p in data["points"]]
        unknown = {k for p in listed for k in p} - set(PARAMETERS)
    if unknown:
        raise SweepError(f"SWEEP='{path}': unknown parameter {', '.join(sorted(unknown))}: use "
                         + ", ".join(PARAMETERS))
    return grid, listed, target or (str(data["target"]) if "target" in data else None)


def weights_for(value: str, base: dict[str, str]) -> dict[str, str]:
    """NODEWEIGHTS=equal | profile | capacity (from the last complete cluster run's node capacities) | a:b:c."""
    keys = settings_of("NODEWEIGHTS")
    if value == "equal":
        return {k: "1" for k in keys}
    if value == "profile":
        return {k: base[k] for k in keys}
    if value == "capacity":
        caps = last_node_capacities()
        if caps is None:
            raise SweepError("NODEWEIGHTS='capacity' needs the node capacities of a complete make bench-cluster run in "
                             "results/history.jsonl: run one first, or give weights as a:b:c")
        return {k: str(w) for k, w in zip(keys, capacity_weights(caps).values())}
    if re.fullmatch(r"[1-9][0-9]{0,2}:[1-9][0-9]{0,2}:[1-9][0-9]{0,2}", value) and all(
            int(w) <= 256 for w in value.split(":")):
        return dict(zip(keys, value.split(":")))
    raise SweepError(f"NODEWEIGHTS='{value}' is not allowed: use equal, profile, capacity or three weights 1..256 as a:b:c")


def last_node_capacities() -> dict[str, float] | None:
    """Each node's capacity in the last complete make bench-cluster of the history."""
    for line in reversed(jsonl.read(history_path())):
        caps = {n: (line.get("capacities") or {}).get(n) for n in topology.NODES}
        if line.get("kind") == "cluster" and line.get("status") == "complete" and all(caps.values()):
            return caps
    return None


def resolve(sweep: Sweep, base: dict[str, str]) -> None:
    """Each point's settings; the baseline (nothing changed) is marked, and measured first when the sweep
    does not contain it."""
    for point in sweep.points:
        for name, value in point.values.items():
            if name == "NODEWEIGHTS":
                point.env.update(weights_for(value, base))
            else:
                point.env.update({k: value for k in settings_of(name)})
        point.baseline = all(base.get(k) == v for k, v in point.env.items())
    if not any(p.baseline for p in sweep.points):
        sweep.points.insert(0, Point("baseline", {}, {}, baseline=True))


def check_points(sweep: Sweep) -> None:
    """Every point's settings through the cluster's own rules (cluster/settings.sh), before anything starts."""
    problems = []
    for point in sweep.points:
        try:
            cluster_settings(point.env)
        except SettingsRefused as refused:
            problems.append(f"{point.label}: " + "; ".join(str(refused).splitlines()[:3]))
    if problems:
        raise SweepError("\n".join(problems))


@contextlib.contextmanager
def applied(env: dict[str, str]):
    """This process's environment with a point's settings over it, while the point is checked or measured: every
    reader of the settings (the balancer's address by TLS, the bench's own settings) sees the point's; restored
    after."""
    before = {key: os.environ.get(key) for key in env}
    os.environ.update(env)
    try:
        yield
    finally:
        for key, value in before.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


def unset_swept(sweep: Sweep) -> None:
    """The swept parameters that are also settings' names (TLS=lb,node) taken out of this process's environment,
    with their CAPBENCH_ spelling: a list of values is the sweep's, and the base settings are the configured ones."""
    for name in sweep.parameters:
        if name in OWN_NAME:
            os.environ.pop(name, None)
            os.environ.pop(f"CAPBENCH_{name}", None)
