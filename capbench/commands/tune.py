"""make tune: capacity at the SLO for each setting of a sweep over Tomcat's connector and thread pool and the
balancer, against the baseline (Tomcat's defaults, the profile's balancer).

  make tune MAXTHREADS=4,16,64,200                  one parameter, a list of values
  make tune MAXTHREADS=4,64 PROTOCOL=nio,nio2       a grid (every combination)
  make tune SWEEP=sweeps/threads.yaml          a sweep file: a grid, or a list of points

The sweep is measured in rounds (TUNE_ROUNDS, 3): each round measures every point once, in an order drawn at
random for that round and recorded in tune.json, so that a slow minute of the machine falls on each point alike;
the points are compared within each round (capbench/report/tune_report.py, capbench/analysis/rounds.py). Each measurement brings
the cluster to the point's settings (make up: the nodes re-created, and the balancer when its settings change,
no image rebuilt) and runs one capacity search through the runner (capbench/engine/runner.py) as a run of its own under
results/<tune-run>/points/<point>/round-<R>/. An interrupted sweep resumes: the same command finds the
unfinished tune run of the same sweep and skips what it finished, in the order it drew (RESUME=0 starts
afresh). At the end
the cluster is brought back to its configured settings, and capbench/report/tune_report.py makes the table, the figure and
the recommendation. Exit status: 0 done, 1 a point failed, 2 bad input or cluster not up, 130 interrupted.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Callable

from capbench.analysis.rounds import draw_orders
from capbench.commands.bench import checked
from capbench.commands.sweep import Point, Sweep, SweepError, applied, check_points, read_sweep, resolve, unset_swept
from capbench.engine.progress import mmss, say
from capbench.engine.runner import Bench
from capbench.engine.session import in_session, measured, refuse
from capbench.hosts.backend import ClusterError
from capbench.hosts.cluster_settings import SettingsRefused, cluster_settings, profile_name
from capbench.hosts.topology import ROOT
from capbench.kinds import KINDS
from capbench.report import tune_report
from capbench.rundata import jsonl
from capbench.rundata.layout import RunPaths, TunePaths, new_run, tune_runs
from capbench.settings.bench import SettingsError


def sweep_hash(sweep: Sweep, settings: dict, driver: str) -> str:
    spec = {"target": sweep.target, "points": [[p.label, p.env] for p in sweep.points], "settings": settings,
            "driver": driver, "profile": profile_name(), "base": cluster_settings(), "rounds": sweep.rounds}
    return hashlib.sha256(json.dumps(spec, sort_keys=True).encode()).hexdigest()[:16]


def find_unfinished(digest: str) -> Path | None:
    for tune_json in tune_runs():
        data = jsonl.read_json(tune_json) or {}
        if data.get("sweep_hash") == digest and data.get("status") != "complete":
            return tune_json.parent
    return None


def point_folder(root: Path, index: int, point: Point, round_: int) -> Path:
    return TunePaths(root).point(index, point.slug, round_)


def finished(folder: Path) -> dict | None:
    summary = jsonl.read_json(RunPaths(folder).summary)
    return summary if summary and summary.get("status") == "complete" else None


def bring_up(label: str, env: dict[str, str]) -> None:
    """make up with the point's settings `env` over this process's environment (python -m capbench.hosts up, as make does:
    this process's own environment stays as it was given)."""
    say(f"{label}: bringing the cluster to these settings (make up; nodes re-created, no image rebuilt)")
    if subprocess.run([sys.executable, "-m", "capbench.hosts", "up"], cwd=ROOT, env={**os.environ, **env}).returncode != 0:
        raise ClusterError(f"make up failed for {label} (its output is above)")


def print_rows(rows: list[dict]) -> None:
    print(f"\n{'setting':<40}{'capacity/s':>11}{'vs base':>9}{'CPU %q':>8}{'GC %':>7}{'busy thr':>9}"
          f"{'CPU cores':>10}{'LB cores':>9}")
    for r in rows:
        f = r.get("figures") or {}
        cap = f"{r['capacity_rps']:.1f}" if r.get("capacity_rps") else r["status"] if r["status"] != "complete" else "none"
        vs = f"{r['vs_baseline_pct']:+.1f}%" if r.get("vs_baseline_pct") is not None else "-"
        cores = round(f["cpu_cores"], 2) if f.get("cpu_cores") is not None else None
        cells = [f.get("cpu_pct_of_quota"), f.get("gc_time_pct"), f.get("busy_threads_mean"), cores,
                 f.get("lb_cpu_cores")]
        print(f"{r['label'][:39]:<40}{cap:>11}{vs:>9}" + "".join(f"{'-' if v is None else v:>{w}}"
                                                             for v, w in zip(cells, (8, 7, 9, 10, 9))))


def print_rounds(result: dict) -> None:
    """Each round's capacities in the order it measured them, the round's best marked."""
    table, labels = result.get("round_table") or [], [p["label"] for p in result["points"]]
    if len(table) < 2:
        return
    print(f"\n{'round':<7}" + "".join(f"{f'{i}. {label}'[:18]:>20}" for i, label in enumerate(labels, 1))
          + "   order (*: the round's best)")
    for number, (capacities, order, top) in enumerate(zip(table, result["orders"],
                                                          result["analysis"]["round_best"]), 1):
        cells = [f"{capacities.get(label) or '-'}{'*' if label == top else ''}" for label in labels]
        print(f"{number:<7}" + "".join(f"{cell:>20}" for cell in cells) + "   " + ",".join(map(str, order)))


def run_point(point: Point, folder: Path, point_id: str, target: str, settings, driver,
              wrk2_local) -> tuple[dict, int]:
    """One point in one round: the cluster brought to its settings, then one capacity search as a run of its
    own, with this process's environment the point's meanwhile (sweep.applied)."""
    with applied(point.env):
        bring_up(point.label, point.env)
        if folder.exists():  # an interrupted attempt: kept aside, never overwritten
            folder.rename(folder.with_name(f"{folder.name}.interrupted-{time.strftime('%H%M%S')}"))
        folder.mkdir(parents=True)
        paths = RunPaths(folder)
        kind = KINDS["single" if target == "node1" else "cluster"]
        point_bench = Bench(kind, settings, driver, wrk2_local, point_id, paths,
                            searches=settings.repeats, cluster_env=point.env)
        return measured(point_bench, lambda: point_bench.search(target),
                        {"tune_point": {"label": point.label, "values": point.values, "env": point.env}})


def base_settings(settings) -> dict[str, str]:
    """What the sweep's points are compared with: the cluster's configured settings, and the harness's own that
    a point may set (HTTP, CONNECTION_LIFE), so that HTTP=1.1,2 finds its baseline among its points."""
    return {**cluster_settings(), "HTTP": settings.http, "CONNECTION_LIFE": settings.connection_life}


def point_benches(sweep: Sweep) -> dict[str, tuple]:
    """Each point's (bench settings, driver, wrk2 binary), checked with the point's settings (HTTP=2 refused with
    LOADGEN=wrk2 as bench would); SettingsError naming every point refused. Where LOADGEN=auto would take
    different drivers for different points (wrk2 in clear text, oha with TLS, capload for a connection per user),
    every point takes the most capable of them: a driver's own cost is part of every figure, so one driver for
    the whole sweep."""
    def each(extra: dict[str, str]) -> dict[str, tuple]:
        chosen, problems = {}, []
        for point in sweep.points:
            try:
                with applied({**point.env, **extra}):
                    chosen[point.label] = checked()
            except (SettingsError, SettingsRefused) as problem:
                problems += [f"{point.label}: {line}" for line in str(problem).splitlines()]
        if problems:
            raise SettingsError("\n".join(problems))
        return chosen
    chosen = each({})
    names = {driver.name for _, driver, _ in chosen.values()}
    if len(names) > 1:
        one = "capload" if "capload" in names else "oha"
        say(f"LOADGEN=auto: {one} for every point (auto would take {', '.join(sorted(names))} by point; one driver "
            "for the whole sweep, its own cost the same in every figure)")
        chosen = each({"LOADGEN": one})
    return chosen


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m capbench.commands.tune", description=__doc__.split("\n\n")[0])
    parser.add_argument("--check-only", action="store_true", help="check the sweep and the settings, run nothing")
    args = parser.parse_args(argv)
    ready = prepared()
    return ready if isinstance(ready, int) else ready(args.check_only)


def prepared() -> int | Callable[[bool], int]:
    """The sweep and the settings checked once: a refusal's exit status, or what runs the sweep (check_only: its
    check alone), sharing what was checked."""
    try:
        if "WEIGHTS" in os.environ:  # one name, one meaning: bench-cluster's
            raise SweepError(f"WEIGHTS='{os.environ['WEIGHTS']}' is bench-cluster's choice of balancings: make tune "
                             "sweeps the nodes' weights as NODEWEIGHTS=equal,profile,capacity or a:b:c")
        sweep = read_sweep(dict(os.environ))
        unset_swept(sweep)  # TLS=lb,node is the sweep's; the base is the configured TLS
        settings, _, _ = checked()
        resolve(sweep, base_settings(settings))
        check_points(sweep)
        benches = point_benches(sweep)
    except (SettingsError, SettingsRefused, SweepError) as problem:
        return refuse(problem)
    return lambda check_only: in_session("make tune", check_only,
                                         lambda: (sweep_run(sweep, settings, benches), None))[0]


def sweep_run(sweep: Sweep, settings, benches: dict[str, tuple]) -> int:
    """Each point not finished before measured, then the cluster brought back to its configured settings and
    the sweep's report made; an interrupted or failed point ends the sweep (the finished ones are kept)."""
    driver = next(iter(benches.values()))[1]  # one for every point (point_benches)
    digest = sweep_hash(sweep, settings.as_dict(), driver.name)
    root = find_unfinished(digest) if os.environ.get("RESUME", "1") != "0" else None
    if root is None:
        run_id, paths = new_run("tune")
        root = paths.root
    else:
        run_id = root.name
    orders = (jsonl.read_json(TunePaths(root).tune_json) or {}).get("orders") or draw_orders(len(sweep.points),
                                                                                     sweep.rounds, run_id)
    tune = {"run_id": run_id, "sweep_hash": digest, "source": sweep.source, "target": sweep.target,
            "parameters": sweep.parameters, "points": [{"label": p.label, "values": p.values, "env": p.env,
                                                         "baseline": p.baseline,
                                                         "settings": benches[p.label][0].as_dict()}
                                                        for p in sweep.points],
            "rounds": sweep.rounds, "orders": orders,
            "settings": settings.as_dict(), "driver": driver.name, "profile": profile_name(),
            "figures_of": "node1" if sweep.target == "node1" else "the nodes (busy threads summed, CPU and GC the "
                                                                  "highest node)", "status": "running"}
    schedule = [(number, index) for number, order in enumerate(orders, 1) for index in order]
    done_before = {(r, i) for r, i in schedule if finished(point_folder(root, i, sweep.points[i - 1], r))}
    say(f"tune {run_id}: {len(sweep.points)} points on {sweep.target} ({', '.join(sweep.parameters)}), "
        f"{len(orders)} rounds in random orders"
        + (f"; resuming: {len(done_before)} of {len(schedule)} measurements finished before are kept"
           if done_before else "")
        + f" → {root}")
    jsonl.write_json(TunePaths(root).tune_json, tune)
    started, code, finished_points = time.monotonic(), 0, 0
    measured_s: list[float] = []  # wall time of each point measured now (for the ETA)
    try:
        for position, (number, index) in enumerate(schedule):
            point = sweep.points[index - 1]
            folder = point_folder(root, index, point, number)
            summary = finished(folder)
            where = f"round {number}/{len(orders)}, point {index}/{len(sweep.points)}"
            if summary is None:
                left = sum(1 for done in schedule[position:] if done not in done_before)
                eta = f", ETA ~{mmss(left * sum(measured_s) / len(measured_s))}" if measured_s else ""
                point_started = time.monotonic()
                say(f"{where}: {point.label}{' (baseline)' if point.baseline else ''}"
                    f"  elapsed {mmss(time.monotonic() - started)}{eta}")
                summary, point_code = run_point(point, folder, f"{run_id}-r{number}p{index:02d}", sweep.target,
                                                *benches[point.label])
                measured_s.append(time.monotonic() - point_started)
                if point_code == 130:
                    raise KeyboardInterrupt
                if summary["status"] == "partial":  # kept aside; the next run of the sweep measures it again
                    raise ClusterError(f"{point.label}: {summary['error']}")
                code = code or point_code
            else:
                say(f"{where}: {point.label}: finished before, kept")
            finished_points += 1
        tune["status"] = "complete"
    except KeyboardInterrupt:
        tune["status"] = "partial"
        code = 130
        say(f"interrupted: the finished points are kept; run the same command again to resume ({run_id})")
    except ClusterError as problem:
        tune["status"] = "partial"
        code = 1
        say(f"stopped: {problem}")
    except Exception:  # a defect of ours: the finished points are kept and the sweep resumes; the traceback follows
        tune["status"] = "partial"
        jsonl.write_json(TunePaths(root).tune_json, tune)
        raise
    finally:
        try:
            bring_up("back to the configured settings", {})
        except (ClusterError, KeyboardInterrupt) as problem:
            say(f"warning: the cluster could not be brought back to its settings: {problem or 'interrupted'}; "
                "run make up")
    jsonl.write_json(TunePaths(root).tune_json, tune)
    # The rows, analysis, figure and page come from the points' folders (as make report RUN=<tune-run> does).
    say(f"report: {tune_report.rebuild(root)}")
    result = json.loads(TunePaths(root).tune_json.read_text())
    analysis = result["analysis"]
    print_rows([r for r in result["rows"] if r["status"] != "not run"])
    print_rounds(result)
    say(f"best: {analysis.get('best')} — {analysis['verdict']}")
    say(analysis["recommendation"])
    say(f"{tune['status']}: {finished_points} of {len(schedule)} measurements in "
        f"{mmss(time.monotonic() - started)} → {root}")
    return code


if __name__ == "__main__":
    sys.exit(main())
