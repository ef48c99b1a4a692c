"""make tune: capacity at the SLO for each setting of a sweep over Tomcat's connector and thread pool and the
balancer, against the baseline (Tomcat's defaults, the profile's balancer).

  make tune MAXTHREADS=4,16,64,200                  one parameter, a list of values
  make tune MAXTHREADS=4,64 PROTOCOL=nio,nio2       a grid (every combination)
  make tune SWEEP=load/sweeps/threads.yaml          a sweep file: a grid, or a list of points

Each point re-creates the nodes (and the balancer when its settings change) with `cluster/up.sh`, without
rebuilding images, and runs one capacity search (load/bench.py) as a run of its own under
results/<tune-run>/points/. An interrupted sweep resumes: the same command finds the unfinished tune run of
the same sweep and skips the points it finished (RESUME=0 starts afresh). At the end the cluster is brought
back to its configured settings, and report/tune.py makes the table, the figure and the recommendation.
Exit status: 0 done, 1 a point failed, 2 bad input or cluster not up, 130 interrupted.
"""
from __future__ import annotations

import argparse
import hashlib
import itertools
import json
import os
import re
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from load import ROOT, bench, loadhost, runlock
from load.bench import Bench, Progress, say
from load.results import RunPaths, new_run, results_dir, write_json
from load.settings import SettingsError, check_for_driver, load_settings
from report import tune as tune_report

# The sweep's parameters: the name on the make line or in a sweep file, the setting it sets, and its kind.
PARAMETERS = {
    "PROTOCOL": "TOMCAT_PROTOCOL",
    "MAXTHREADS": "TOMCAT_MAX_THREADS",
    "MINSPARETHREADS": "TOMCAT_MIN_SPARE_THREADS",
    "ACCEPTCOUNT": "TOMCAT_ACCEPT_COUNT",
    "MAXCONNECTIONS": "TOMCAT_MAX_CONNECTIONS",
    "MAXKEEPALIVEREQUESTS": "TOMCAT_MAX_KEEP_ALIVE_REQUESTS",
    "BALANCE": "LB_BALANCE",
    "WEIGHTS": "NODE1_WEIGHT NODE2_WEIGHT NODE3_WEIGHT",  # equal | profile | capacity | a:b:c
    "SERVERMAXCONN": "NODE1_MAXCONN NODE2_MAXCONN NODE3_MAXCONN",  # the same per-server maxconn on each node
}
BALANCER = ("BALANCE", "WEIGHTS", "SERVERMAXCONN")
TARGETS = ("node1", "cluster")
MAX_POINTS = 64
UP = ROOT / "cluster" / "up.sh"
COMPOSE = ROOT / "cluster" / "compose.sh"


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


def _values(text: str) -> list[str]:
    return [v.strip() for v in str(text).split(",")]


def read_sweep(environ: dict[str, str]) -> Sweep:
    """The sweep from SWEEP=<file> or the make line's parameters (not both), checked for shape; the values
    themselves are checked by cluster/settings.sh (check_points)."""
    given = {name: environ[name] for name in PARAMETERS if environ.get(name, "").strip()}
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
    if target is not None and target not in TARGETS:
        raise SweepError(f"TUNE_TARGET='{target}' is not allowed: use one of {', '.join(TARGETS)}")
    if target is None:
        target = "cluster" if any(n in BALANCER for n in names) else "node1"
    if target == "node1" and any(n in BALANCER for n in names):
        raise SweepError(f"balancer settings ({', '.join(n for n in names if n in BALANCER)}) need "
                         "TUNE_TARGET=cluster: node1 alone is not balanced")
    return Sweep(names, points, target, sweep_file or " ".join(f"{n}={v}" for n, v in given.items()))


def _read_file(path: Path, target: str | None) -> tuple[dict | None, list | None, str | None]:
    """A sweep file: `grid: {NAME: [values]}` or `points: [{NAME: value, ...}]`, and optionally `target`."""
    if not path.is_file():
        raise SweepError(f"SWEEP='{path}' is not a file: give a sweep file such as load/sweeps/threads.yaml")
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


def baseline_settings() -> dict[str, str]:
    """The settings the cluster runs with when nothing is swept: the profile and the tunables, with the
    environment's overrides (as cluster/compose.sh reads them)."""
    return bench.cluster_settings()


def weights_for(value: str, base: dict[str, str]) -> dict[str, str]:
    """WEIGHTS=equal | profile | capacity (from the last complete cluster run's node capacities) | a:b:c."""
    keys = PARAMETERS["WEIGHTS"].split()
    if value == "equal":
        return {k: "1" for k in keys}
    if value == "profile":
        return {k: base[k] for k in keys}
    if value == "capacity":
        caps = last_node_capacities()
        if caps is None:
            raise SweepError("WEIGHTS='capacity' needs the node capacities of a complete make bench-cluster run in "
                             "results/: run one first, or give weights as a:b:c")
        return {k: str(w) for k, w in zip(keys, bench.capacity_weights(caps).values())}
    if re.fullmatch(r"[1-9][0-9]{0,2}:[1-9][0-9]{0,2}:[1-9][0-9]{0,2}", value) and all(
            int(w) <= 256 for w in value.split(":")):
        return dict(zip(keys, value.split(":")))
    raise SweepError(f"WEIGHTS='{value}' is not allowed: use equal, profile, capacity or three weights 1..256 as a:b:c")


def last_node_capacities() -> dict[str, float] | None:
    for summary_path in sorted(results_dir().glob("*-cluster*/summary.json"), reverse=True):
        try:
            summary = json.loads(summary_path.read_text())
        except (OSError, ValueError):
            continue
        caps = {n: (summary.get("targets", {}).get(n) or {}).get("capacity_rps") for n in loadhost.NODES}
        if summary.get("status") == "complete" and all(caps.values()):
            return caps
    return None


def resolve(sweep: Sweep, base: dict[str, str]) -> None:
    """Each point's settings; the baseline (nothing changed) is marked, and measured first when the sweep
    does not contain it."""
    for point in sweep.points:
        for name, value in point.values.items():
            if name == "WEIGHTS":
                point.env.update(weights_for(value, base))
            elif name == "SERVERMAXCONN":
                point.env.update({k: value for k in PARAMETERS[name].split()})
            else:
                point.env[PARAMETERS[name]] = value
        point.baseline = all(base.get(k) == v for k, v in point.env.items())
    if not any(p.baseline for p in sweep.points):
        sweep.points.insert(0, Point("baseline", {}, {}, baseline=True))


def check_points(sweep: Sweep) -> None:
    """Every point's settings through the cluster's own rules (cluster/settings.sh via compose.sh), before
    anything starts."""
    problems = []
    for point in sweep.points:
        done = subprocess.run([str(COMPOSE), "config", "--quiet"], env={**os.environ, **point.env},
                              capture_output=True, text=True, cwd=ROOT)
        if done.returncode != 0:
            lines = [line.removeprefix("capbench: ") for line in done.stderr.splitlines() if line.strip()]
            problems.append(f"{point.label}: " + "; ".join(lines[:3]))
    if problems:
        raise SweepError("\n".join(problems))


def sweep_hash(sweep: Sweep, settings: dict, driver: str) -> str:
    spec = {"target": sweep.target, "points": [[p.label, p.env] for p in sweep.points], "settings": settings,
            "driver": driver, "profile": bench.profile_name(), "base": baseline_settings()}
    return hashlib.sha256(json.dumps(spec, sort_keys=True).encode()).hexdigest()[:16]


def find_unfinished(digest: str) -> Path | None:
    for tune_json in sorted(results_dir().glob("*-tune*/tune.json"), reverse=True):
        try:
            data = json.loads(tune_json.read_text())
        except (OSError, ValueError):
            continue
        if data.get("sweep_hash") == digest and data.get("status") != "complete":
            return tune_json.parent
    return None


def point_folder(root: Path, index: int, point: Point) -> Path:
    return root / "points" / f"{index:02d}-{point.slug}"


def finished(folder: Path) -> dict | None:
    try:
        summary = json.loads((folder / "summary.json").read_text())
    except (OSError, ValueError):
        return None
    return summary if summary.get("status") == "complete" else None


def apply(env: dict[str, str], original: dict[str, str | None]) -> None:
    """The point's settings in this process's environment (compose.sh and the run's record read them)."""
    for key, value in original.items():
        if value is None:
            os.environ.pop(key, None)
        else:
            os.environ[key] = value
    os.environ.update(env)


def bring_up(label: str) -> None:
    say(f"{label}: bringing the cluster to these settings (cluster/up.sh; nodes re-created, no image rebuilt)")
    done = subprocess.run([str(UP)], cwd=ROOT, capture_output=True, text=True)
    if done.returncode != 0:
        raise loadhost.ClusterError(f"cluster/up.sh failed for {label}: {done.stderr.strip()[-600:]}")
    say(f"{label}: {done.stdout.strip().splitlines()[-1] if done.stdout.strip() else 'up'}")


def print_rows(rows: list[dict]) -> None:
    print(f"\n{'setting':<40}{'capacity/s':>11}{'vs base':>9}{'CPU %q':>8}{'GC %':>7}{'busy thr':>9}"
          f"{'CPU cores':>10}")
    for r in rows:
        f = r.get("figures") or {}
        cap = f"{r['capacity_rps']:.1f}" if r.get("capacity_rps") else r["status"] if r["status"] != "complete" else "none"
        vs = f"{r['vs_baseline_pct']:+.1f}%" if r.get("vs_baseline_pct") is not None else "-"
        cores = round(f["cpu_cores"], 2) if f.get("cpu_cores") is not None else None
        cells = [f.get("cpu_pct_of_quota"), f.get("gc_time_pct"), f.get("busy_threads_mean"), cores]
        print(f"{r['label'][:39]:<40}{cap:>11}{vs:>9}" + "".join(f"{'-' if v is None else v:>{w}}"
                                                             for v, w in zip(cells, (8, 7, 9, 10))))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m load.tune", description=__doc__.split("\n\n")[0])
    parser.add_argument("--check-only", action="store_true", help="check the sweep and the settings, run nothing")
    args = parser.parse_args(argv)
    # The sweep's names are not bench settings (WEIGHTS means something else to bench-cluster).
    environ = {k: v for k, v in os.environ.items() if k not in PARAMETERS}
    try:
        settings = load_settings(environ)
        bench.check_profile()
        driver, wrk2_local = bench.choose_driver(settings, dict(os.environ))
        settings = check_for_driver(settings, driver.name)
        sweep = read_sweep(dict(os.environ))
        base = baseline_settings()
        resolve(sweep, base)
        check_points(sweep)
    except (SettingsError, SweepError) as problem:
        return bench.refuse(problem)
    try:
        lock = runlock.acquire("make tune")  # held until this process exits (see load/bench.py's main)
    except runlock.Busy as busy:
        return bench.refuse(busy)
    if args.check_only:
        return 0
    if bench.cluster_not_up():
        return 2

    digest = sweep_hash(sweep, settings.as_dict(), driver.name)
    root = find_unfinished(digest) if os.environ.get("RESUME", "1") != "0" else None
    if root is None:
        run_id, paths = new_run("tune")
        root = paths.root
    else:
        run_id = root.name
    tune = {"run_id": run_id, "sweep_hash": digest, "source": sweep.source, "target": sweep.target,
            "parameters": sweep.parameters, "points": [{"label": p.label, "values": p.values, "env": p.env,
                                                         "baseline": p.baseline} for p in sweep.points],
            "settings": settings.as_dict(), "driver": driver.name, "profile": bench.profile_name(),
            "figures_of": "node1" if sweep.target == "node1" else "the nodes (busy threads summed, CPU and GC the "
                                                                  "highest node)", "status": "running"}
    done_before = [i for i, p in enumerate(sweep.points, 1) if finished(point_folder(root, i, p))]
    say(f"tune {run_id}: {len(sweep.points)} points on {sweep.target} ({', '.join(sweep.parameters)})"
        + (f"; resuming: {len(done_before)} finished before are kept" if done_before else "") + f" → {root}")
    write_json(root / "tune.json", tune)
    signal.signal(signal.SIGTERM, bench._interrupt)
    original = {k: os.environ.get(k) for p in sweep.points for k in p.env}
    started, code, finished_points = time.monotonic(), 0, 0
    measured_s: list[float] = []  # wall time of each point measured now (for the ETA)
    try:
        for index, point in enumerate(sweep.points, 1):
            folder = point_folder(root, index, point)
            summary = finished(folder)
            if summary is None:
                left = sum(1 for i in range(index, len(sweep.points) + 1) if i not in done_before)
                eta = f", ETA ~{bench._mmss(left * sum(measured_s) / len(measured_s))}" if measured_s else ""
                point_started = time.monotonic()
                say(f"point {index}/{len(sweep.points)}: {point.label}{' (baseline)' if point.baseline else ''}"
                    f"  elapsed {bench._mmss(time.monotonic() - started)}{eta}")
                summary, point_code = run_point(point, folder, index, run_id, sweep.target, settings, driver,
                                                wrk2_local, original)
                measured_s.append(time.monotonic() - point_started)
                if point_code == 130:
                    raise KeyboardInterrupt
                if summary["status"] == "partial":  # kept aside; the next run of the sweep measures it again
                    raise loadhost.ClusterError(f"{point.label}: {summary['error']}")
                code = code or point_code
            else:
                say(f"point {index}/{len(sweep.points)}: {point.label}: finished before, kept")
            finished_points += 1
        tune["status"] = "complete"
    except KeyboardInterrupt:
        tune["status"] = "partial"
        code = 130
        say(f"interrupted: the finished points are kept; run the same command again to resume ({run_id})")
    except loadhost.ClusterError as problem:
        tune["status"] = "partial"
        code = 1
        say(f"stopped: {problem}")
    finally:
        apply({}, original)
        try:
            bring_up("back to the configured settings")
        except (loadhost.ClusterError, KeyboardInterrupt) as problem:
            say(f"warning: the cluster could not be brought back to its settings: {problem or 'interrupted'}; "
                "run make up")
    write_json(root / "tune.json", tune)
    # The rows, analysis, figure and page come from the points' folders (as make report RUN=<tune-run> does).
    say(f"report: {tune_report.rebuild(root)}")
    result = json.loads((root / "tune.json").read_text())
    analysis = result["analysis"]
    print_rows([r for r in result["rows"] if r["status"] != "not run"])
    say(f"best: {analysis.get('best')} — {analysis['verdict']}")
    say(analysis["recommendation"])
    say(f"{tune['status']}: {finished_points} of {len(sweep.points)} points in "
        f"{bench._mmss(time.monotonic() - started)} → {root}")
    lock.close()
    return code


def run_point(point: Point, folder: Path, index: int, run_id: str, target: str, settings, driver, wrk2_local,
              original: dict) -> tuple[dict, int]:
    """One point: the cluster brought to its settings, then one capacity search as a run of its own."""
    apply(point.env, original)
    bring_up(point.label)
    if folder.exists():  # an interrupted attempt: kept aside, never overwritten
        folder.rename(folder.with_name(f"{folder.name}.interrupted-{time.strftime('%H%M%S')}"))
    folder.mkdir(parents=True)
    paths = RunPaths(folder)
    kind = "single" if target == "node1" else "cluster"
    point_bench = Bench(kind, settings, driver, wrk2_local, f"{run_id}-p{index:02d}", paths)
    point_bench.progress = Progress(settings.repeats, settings.step_s)
    summary, code = bench.execute(point_bench, lambda: point_bench.search(target))
    summary["tune_point"] = {"label": point.label, "values": point.values, "env": point.env}
    write_json(paths.summary, summary)
    bench.report(point_bench, summary)
    return summary, code


if __name__ == "__main__":
    sys.exit(main())
