"""make tune's analysis, from the points' summaries alone: each setting's capacity and its effect against the
baseline (Tomcat's defaults and the profile's balancer), the best setting and its margin over the noise band,
a recommendation grounded in the measurements (Little's law for thread counts), the figure (bars for a list,
a heatmap for a 2-D grid) and tune.html.

Measured in rounds (TUNE_ROUNDS, every point once a round in a random order), the points are compared within
each round (capbench/analysis/rounds.py): a setting's capacity is the median of its rounds', the noise band is how far
the best's ratio over the runner-up moved between rounds, and the recommendation says how often it won its
round. With one round, the older rule: the band is the search's precision, or the widest spread of the compared
points' repeats, and with one repeat per point a margin beyond the precision is "cannot tell"."""
from __future__ import annotations

import base64
import math
from dataclasses import replace
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
from jinja2 import Environment, FileSystemLoader, select_autoescape  # noqa: E402

from capbench.analysis import rounds  # noqa: E402
from capbench.rundata import jsonl, workload  # noqa: E402
from capbench.rundata.layout import RunPaths, TunePaths  # noqa: E402
from capbench.rundata.records import read_steps  # noqa: E402
from capbench.rundata.summary import Summary, TargetSummary, serving_nodes  # noqa: E402
from capbench.rundata.tune import TuneRecord, TuneRow  # noqa: E402

TEMPLATE_DIR = Path(__file__).parent


def point_row(label: str, values: dict, env: dict, baseline: bool, folder: Path, summary: Summary | None,
              target: str) -> TuneRow:
    """One setting's row from its run folder (summary None: not run): capacity, repeats, the node figures at
    capacity, p99 there."""
    t = (summary.targets.get(target) if summary else None) or TargetSummary()
    at = t.metrics_at_capacity or {}  # PCP's figures by host, and the step they come from
    figures = _node_figures(at.get("node1")) if target == "node1" else _cluster_figures(at)
    if figures is not None:  # the balancer's CPU beside the nodes': where TLS ends, it may pace the point
        figures["lb_cpu_cores"] = (at.get("lb") or {}).get("haproxy_cpu_cores")
    return TuneRow(label, values, env, baseline, folder.name, summary.status if summary else "not run",
                   t.capacity_rps, t.repeats, t.spread_pct, figures, _p99_at(folder, at.get("step")))


def _cores(figures: dict) -> float | None:
    """CPU cores the node's java used: its % of quota times the quota (PCP's figures of a node, by metric
    name, as capbench/metrics/catalogue.py names them: a figure not logged is absent)."""
    pct, quota = figures.get("cpu_pct_of_quota"), figures.get("cpu_quota")
    return pct / 100 * quota if pct is not None and quota else None


def _node_figures(figures: dict | None) -> dict | None:
    return {**figures, "cpu_cores": _cores(figures)} if figures else None


def _cluster_figures(at: dict) -> dict | None:
    """For a cluster point: busy threads and CPU cores summed over the nodes, CPU % and GC % of the busiest."""
    nodes = list(serving_nodes(at).values())
    if not nodes:
        return None
    cores = [_cores(n) for n in nodes]
    return {"busy_threads_mean": round(sum(n.get("busy_threads_mean") or 0 for n in nodes), 2),
            "cpu_cores": sum(cores) if all(c is not None for c in cores) else None,
            "cpu_pct_of_quota": max(n.get("cpu_pct_of_quota") or 0 for n in nodes),
            "gc_time_pct": max(n.get("gc_time_pct") or 0 for n in nodes),
            "alloc_mb_per_s": round(sum(n.get("alloc_mb_per_s") or 0 for n in nodes), 1)}


def _p99_at(folder: Path, step: int | None) -> float | None:
    if step is None:
        return None
    for record in read_steps(RunPaths(folder).steps):
        if record.step == step:
            return record.result.latency_ms.get("p99")
    return None


def round_folders(root: Path, index: int) -> list[Path]:
    """The point's run folder of each round (points/NN-slug/round-R), or its one folder (points/NN-slug) in a
    tune run of one round made before rounds."""
    found = TunePaths(root).point_folders(index)
    if not found:
        return [TunePaths(root).missing_point(index)]
    if RunPaths(found[0]).summary.exists():
        return [found[0]]
    kept = [f for f in found[0].glob("round-*") if ".interrupted-" not in f.name]
    return sorted(kept, key=lambda f: int(f.name.split("-")[1])) or [found[0] / "round-1"]


def point_rows(root: Path, index: int, point: dict, target: str) -> tuple[TuneRow, list[float | None]]:
    """A setting's row and its capacity in each round: the row's capacity is the median of the rounds', its
    repeats every round's, its figures, p99 and link those of the round nearest that median."""
    per_round = []
    for folder in round_folders(root, index):
        written = jsonl.read_json(RunPaths(folder).summary)
        row = point_row(point["label"], point["values"], point["env"], point["baseline"], folder,
                        Summary.from_json(written) if written else None, target)
        per_round.append(replace(row, folder=str(folder.relative_to(TunePaths(root).points))))
    capacities = [r.capacity_rps for r in per_round]
    if len(per_round) == 1:
        return per_round[0], capacities
    found = [c for c in capacities if c]
    middle = round(float(np.median(found)), 1) if found else None
    nearest = min(per_round, key=lambda r: abs((r.capacity_rps or 0) - (middle or 0)))
    status = next((r.status for r in per_round if r.status != "complete"), "complete")
    repeats = [c for r in per_round for c in r.repeats]  # every round's, not the nearest round's alone
    spread = round(100 * (max(repeats) - min(repeats)) / middle, 1) if len(repeats) > 1 and middle else None
    return replace(nearest, capacity_rps=middle, round_capacities=capacities, repeats=repeats, spread_pct=spread,
                   status=status), capacities


def rebuild(root: Path) -> Path:
    """tune.html again from the tune run's folder alone (make report RUN=<tune-run>): the rows from each
    point's summary in each round, the analysis, the figure and the page."""
    paths = TunePaths(root)
    tune = TuneRecord.from_json(jsonl.read_json(paths.tune_json))
    rows, table = [], []
    for index, point in enumerate(tune.points, 1):
        row, capacities = point_rows(root, index, point, tune.target)
        rows.append(row)
        for number, capacity in enumerate(capacities):
            if len(table) <= number:
                table.append({})
            table[number][point["label"]] = capacity
    analysis = analyse(rows, tune.settings["precision_pct"], table)
    tune = replace(tune, rows=rows, analysis=analysis, round_table=table)
    jsonl.write_json(paths.tune_json, tune.to_json())
    return page(tune, rows, analysis, figure(rows, tune.parameters, analysis, paths.figure), paths.page)


def band_pct(precision_pct: float, *points: TuneRow) -> float:
    return max([precision_pct, *[p.spread_pct or 0.0 for p in points]])


def analyse(points: list[TuneRow], precision_pct: float, table: list[dict] | None = None) -> dict:
    """points: each setting's row; table: each round's capacities by label. Returns the best, margins, verdict,
    recommendation, and sets each row's effect against the baseline. Two rounds or more are judged within each
    round (capbench/analysis/rounds.py); one round by the older rule below."""
    if table and len(table) >= 2:
        return analyse_rounds(points, precision_pct, table)
    measured = [p for p in points if p.capacity_rps]
    baseline = next((p for p in points if p.baseline), None)
    for p in points:
        base = baseline.capacity_rps if baseline else None
        p.vs_baseline_pct = round(100 * (p.capacity_rps / base - 1), 1) if p.capacity_rps and base else None
    if not measured:
        return {"best": None, "verdict": "no point found a capacity", "recommendation": "nothing to recommend: "
                "no setting met the SLO at any rate tried", "band_pct": precision_pct, "within_band": []}
    ranked = sorted(measured, key=lambda p: p.capacity_rps, reverse=True)
    best = ranked[0]
    runner = ranked[1] if len(ranked) > 1 else None
    band = band_pct(precision_pct, best, *([runner] if runner else []))
    margin = round(100 * (best.capacity_rps / runner.capacity_rps - 1), 1) if runner else None
    repeated = all(len(p.repeats) >= 2 for p in (best, runner) if p)
    if runner is None:
        verdict = "only one point has a capacity"
    elif margin <= band:
        verdict = f"within the noise band: {best.label} and {runner.label} cannot be told apart"
    elif repeated:
        verdict = f"significant: {margin:g} % over the next best, beyond the band ±{band:g} %"
    else:
        verdict = (f"cannot tell: {margin:g} % over the next best is beyond the search precision ±{band:g} %, "
                   "but with one repeat per point the run-to-run noise is not measured (REPEATS=3 measures it)")
    floor = best.capacity_rps * (1 - band / 100)
    within = [p.label for p in measured if p.capacity_rps >= floor]
    return {"best": best.label, "best_rps": best.capacity_rps, "runner_up": runner.label if runner else None,
            "margin_pct": margin, "band_pct": round(band, 1), "verdict": verdict, "within_band": within,
            "little": little(best), "recommendation": recommend(points, best, baseline, within, band)}


def analyse_rounds(points: list[TuneRow], precision_pct: float, table: list[dict]) -> dict:
    """The best and the noise band from the points' comparisons within each round; each point's effect against
    the baseline is the median of its per-round ratios."""
    baseline = next((p for p in points if p.baseline), None)
    judged = rounds.compare(table, precision_pct, baseline.label if baseline else None)
    for p in points:
        p.vs_baseline_pct = judged["vs_baseline_pct"].get(p.label)  # none for the baseline itself
    if judged["best"] is None:
        return {**judged, "recommendation": "nothing to recommend: no setting met the SLO in every round"}
    best = next(p for p in points if p.label == judged["best"])
    text = recommend(points, best, baseline, judged["within_band"], judged["band_pct"])
    won = judged["wins"][best.label]
    return {**judged, "best_rps": best.capacity_rps, "little": little(best),
            "recommendation": f"{text} {best.label} had the highest capacity of its round in {won} of "
                              f"{judged['rounds']} rounds."}


def little(point: TuneRow) -> dict | None:
    """Little's law at the point's capacity: threads running = throughput × the CPU time each request needs
    (its service demand: the CPU the node's java used over the requests it served, from PCP), against the busy
    threads PCP measured. (Tomcat's own processing time counts whole milliseconds per request, too coarse
    for requests under a millisecond.)"""
    f = point.figures or {}
    x, cores = point.capacity_rps, f.get("cpu_cores")
    if not x or cores is None:
        return None
    demand_ms = 1000 * cores / x
    return {"throughput_rps": x, "cpu_ms_per_request": round(demand_ms, 3), "threads_needed": round(cores, 2),
            "busy_threads_measured": f.get("busy_threads_mean")}


# Settings where fewer is better at the same capacity, and what each more one costs.
FEWEST_WINS = {
    "MAXTHREADS": "threads (more only add requests waiting inside the node)",
    "POOLSIZE": "pooled connections (each node's pool stays open in the shared database, which holds NODES × it)",
}


# The figure at capacity (PCP) that shows each such setting as the node ran with it: the baseline, which sets
# nothing, is compared by what it measured.
MEASURED_AS = {"MAXTHREADS": "max_threads", "POOLSIZE": "db_pool_size"}


def _setting(point: TuneRow, name: str) -> int | None:
    if name in point.values:
        return int(point.values[name])
    measured = (point.figures or {}).get(MEASURED_AS[name])  # PCP's, absent where not logged
    return int(measured) if measured else None


def _fewest_within(by_label: dict, within: list[str]) -> tuple[str, dict, int] | None:
    """The point within the band with the fewest of the first FEWEST_WINS setting the sweep varied, and that
    number."""
    for name in FEWEST_WINS:
        if not any(name in by_label[label].values for label in by_label):
            continue
        candidates = [(p, n) for p in (by_label[label] for label in within) if (n := _setting(p, name)) is not None]
        if candidates:
            point, n = min(candidates, key=lambda c: c[1])
            return name, point, n
    return None


def recommend(points: list[TuneRow], best: TuneRow, baseline: TuneRow | None, within: list[str], band: float) -> str:
    by_label = {p.label: p for p in points}
    text = []
    law = little(best)
    if law:
        text.append(f"Little's law at the best point ({best.label}): {law['throughput_rps']:g}/s × "
                    f"{law['cpu_ms_per_request']:g} ms of CPU per request = {law['threads_needed']:g} threads "
                    f"running on average; PCP measured {law['busy_threads_measured']} busy (the others waited: "
                    "for a lock, the CPU quota or I/O).")
    fewest = _fewest_within(by_label, within)
    if fewest:
        name, point, n = fewest
        if name == "MAXTHREADS":
            need = math.ceil(law["threads_needed"]) if law else None
            relation = ("" if need is None else f", at least the {need} that Little's law asks for" if n >= need
                        else f", below the {need} of Little's law: requests waited in the connector's queue instead "
                             "of on a thread, at no cost to capacity within the band")
        else:
            active = (best.figures or {}).get("db_pool_active_mean")  # PCP's, absent without a database
            relation = "" if active is None else f" (the best point had {active:g} of its connections in use on average)"
        below = round(100 * (1 - point.capacity_rps / best.capacity_rps), 1)
        label = point.label if name in point.values else f"{point.label} ({name}={n})"
        text.append(f"Recommended: {label}, the fewest {FEWEST_WINS[name]} whose capacity is within the noise "
                    f"band of the best{relation}: {point.capacity_rps:g}/s, {below:g} % under the best "
                    f"{best.capacity_rps:g}/s, inside the band of ±{band:g} %.")
    elif baseline is not None and baseline.label in within:
        text.append("Keep the baseline: no setting beat it beyond the noise band.")
    else:
        text.append(f"Recommended: {best.label}"
                    + (f", {best.vs_baseline_pct:+g} % over the baseline." if best.vs_baseline_pct is not None
                       else "."))
    return " ".join(text)


def figure(points: list[TuneRow], parameters: list[str], analysis: dict, path: Path) -> Path:
    """A heatmap for a full 2-D grid, else bars per setting (min..max of the rounds, or of the repeats, as error
    bars)."""
    grid = [p for p in points if not p.baseline or all(k in p.values for k in parameters)]
    if len(parameters) == 2 and len(grid) == len({p.values[parameters[0]] for p in grid}) * len(
            {p.values[parameters[1]] for p in grid}):
        return _heatmap(grid, parameters, analysis, path)
    fig, ax = plt.subplots(figsize=(max(7, 1.3 * len(points)), 4.8))
    caps = [p.capacity_rps or 0 for p in points]
    spread = [[c for c in p.round_capacities or p.repeats if c] for p in points]
    low = [c - min(values or [c]) for c, values in zip(caps, spread)]
    high = [max(values or [c]) - c for c, values in zip(caps, spread)]
    colours = ["tab:gray" if p.baseline else "tab:purple" if p.label == analysis["best"] else "tab:blue"
               for p in points]
    bars = ax.bar([p.label.replace(" ", "\n") for p in points], caps, color=colours, yerr=[low, high], capsize=4)
    ax.bar_label(bars, fmt="%.0f")
    if analysis["best"] is not None:
        floor = analysis["best_rps"] * (1 - analysis["band_pct"] / 100)
        ax.axhspan(floor, analysis["best_rps"], color="tab:purple", alpha=0.12,
                   label=f"noise band of the best (±{analysis['band_pct']:g} %)")
        ax.legend(loc="lower right", fontsize=8)
    ax.set_ylabel("capacity, requests/s at the SLO")
    ax.set_title("capacity per setting (grey: baseline, purple: best)")
    return _save(fig, path)


def _heatmap(points: list[TuneRow], parameters: list[str], analysis: dict, path: Path) -> Path:
    rows = sorted({p.values[parameters[0]] for p in points}, key=_order)
    cols = sorted({p.values[parameters[1]] for p in points}, key=_order)
    data = np.full((len(rows), len(cols)), np.nan)
    for p in points:
        data[rows.index(p.values[parameters[0]]), cols.index(p.values[parameters[1]])] = p.capacity_rps or np.nan
    fig, ax = plt.subplots(figsize=(max(7.0, 2.5 + 1.6 * len(cols)), 2.0 + 1.0 * len(rows)))
    image = ax.imshow(data, cmap="viridis", aspect="auto", vmin=0)  # from zero: colours compare as ratios
    for i in range(len(rows)):
        for j in range(len(cols)):
            text = "none" if np.isnan(data[i, j]) else f"{data[i, j]:.0f}"
            dark = np.isnan(data[i, j]) or data[i, j] < 0.5 * np.nanmax(data)  # viridis is dark below half
            ax.text(j, i, text, ha="center", va="center", color="white" if dark else "black")
    ax.set_xticks(range(len(cols)), cols)
    ax.set_yticks(range(len(rows)), rows)
    ax.set_xlabel(parameters[1])
    ax.set_ylabel(parameters[0])
    fig.colorbar(image, label="capacity, requests/s")
    ax.set_title(f"capacity per setting (best: {analysis['best']})", fontsize=10)
    return _save(fig, path)


def _order(value: str):
    return (0, int(value), "") if value.lstrip("-").isdigit() else (1, 0, value)


def _save(fig, path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return path


def page(tune: TuneRecord, points: list[TuneRow], analysis: dict, figure_path: Path, out: Path) -> Path:
    env = Environment(loader=FileSystemLoader(TEMPLATE_DIR), autoescape=select_autoescape(["html"]))
    src = "data:image/png;base64," + base64.b64encode(figure_path.read_bytes()).decode()
    html = env.get_template("tune.html").render(tune=tune, points=points, analysis=analysis, figure=src,
                                                workload=workload.describe(tune.settings))
    tmp = out.with_suffix(".html.tmp")
    tmp.write_text(html)
    tmp.replace(out)
    return out
