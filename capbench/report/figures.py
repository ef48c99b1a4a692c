"""The report's figures (PNG, matplotlib), each made from the run's records alone:
  capacity-<target>.png   the study's summary figure, over the run's time: throughput (offered, achieved) and
                          corrected latency; concurrency and failures; per-node CPU % of quota, GC % and heap;
  single-vs-cluster.png   each node's capacity, their sum and the cluster's, with E; capacity per CPU of quota;
  load-balance.png        each node's share of the cluster step's requests (HAProxy's and Tomcat's counts)
                          against its weight's share and its share of the nodes' capacities;
  latency-spectrum.png    corrected latency by percentile at each target's capacity (log scale, as
                          HdrHistogram plots it);
  usl.png                 measured throughput by concurrency and the fitted USL curve (bench-usl);
  scaleout.png            X(N) against the ideal and the USL over N, E(N) beneath (bench-scaleout);
  balancing.png           the cluster's capacity under each balancing choice, with E (WEIGHTS=auto);
  variants.png            each Grinder variant's capacity on node1 and on the cluster, with the evidence at
                          node1's capacity: allocation rate, % time in GC, request threads blocked (bench-variants);
  failover.png            second by second through a node's fault and return: answers by node, failures, p99,
                          the moments of the fault, its detection, its undoing and the first answer;
  stress.png              second by second through an overload and after it: offered, answered, failed, p99,
                          the capacity and the time to recover (the study's figure 5)."""
from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")  # files only: no display on a bench host
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
from matplotlib.ticker import MaxNLocator  # noqa: E402

from capbench.analysis import scaling  # noqa: E402
from capbench.rundata.records import StepRecord  # noqa: E402
from capbench.rundata.summary import Summary, node_figures  # noqa: E402

NODE_COLOURS = {"node1": "tab:blue", "node2": "tab:orange", "node3": "tab:green", "cluster": "tab:purple"}
MORE_COLOURS = ("tab:brown", "tab:pink", "tab:olive", "tab:cyan", "tab:gray")


def colour_of(name: str) -> str:
    """A node's (or the cluster's) colour in every figure; nodes beyond the third get the next free ones."""
    if name in NODE_COLOURS:
        return NODE_COLOURS[name]
    digits = "".join(c for c in name if c.isdigit())
    return MORE_COLOURS[int(digits or 0) % len(MORE_COLOURS)]
DPI = 100


def save(fig, path: Path) -> Path:
    fig.tight_layout()
    fig.savefig(path, dpi=DPI)
    plt.close(fig)
    return path


def capacity_summary(target: str, records: list[StepRecord], capacity: float | None, t0: float, path: Path,
                     nodes: tuple[str, ...], title: str | None = None, events: list[dict] | None = None) -> Path:
    """nodes: the run's; title: the search's label where it is not the target alone (e.g. "cluster v2"); events: HAProxy's
    DOWN/UP changes of the nodes (summary.json's lb_events), marked where they fall in these steps' time."""
    steps = [r for r in records if r.target == target]
    x = np.array([(r.result.start_epoch - t0) / 60 for r in steps])
    width = np.array([(r.result.end_epoch - r.result.start_epoch) / 60 for r in steps])
    mid = x + width / 2
    fig, (top, middle, bottom) = plt.subplots(3, 1, figsize=(10, 10), sharex=True)
    title = title or target
    fig.suptitle(f"{title}: capacity {capacity:g}/s" if capacity else f"{title}: no capacity found")

    offered = [r.result.offered_rps for r in steps]
    top.bar(x, offered, width=width, align="edge", color="lightgrey", label="offered /s")
    top.plot(mid, [r.result.achieved_rps for r in steps], "o-", color="black", label="achieved /s")
    failed = [i for i, r in enumerate(steps) if not r.passed]
    top.plot(mid[failed], [steps[i].result.achieved_rps for i in failed], "x", color="red", markersize=10,
             label="SLO broken")
    if capacity:
        top.axhline(capacity, color="tab:purple", linestyle="--", linewidth=1, label=f"capacity {capacity:g}/s")
    top.set_ylabel("requests/s")
    lat = top.twinx()
    for name, style in (("p50", ":"), ("p99", "-"), ("p99.9", "--")):
        lat.plot(mid, [r.result.latency_ms.get(name) or np.nan for r in steps], style, color="tab:red",
                 label=f"{name} latency", alpha=0.8)
    lat.set_yscale("log")
    lat.set_ylabel("corrected latency, ms (log)")
    _legend(top, lat)

    middle.plot(mid, [r.result.connections for r in steps], "s-", color="grey", label="generator connections")
    busy = [_sum_nodes(r, "busy_threads_mean") for r in steps]
    middle.plot(mid, busy, "o-", color="tab:blue", label="busy Tomcat threads (sum of nodes)")
    conns = [_sum_nodes(r, "connections_mean") for r in steps]
    middle.plot(mid, conns, "^-", color="tab:cyan", label="open Tomcat connections (sum)")
    middle.set_ylabel("concurrency")
    fail = middle.twinx()
    fail.plot(mid, [r.result.failure_pct for r in steps], "x--", color="tab:red", label="failures %")
    fail.set_ylabel("failures, % of requests")
    fail.set_ylim(bottom=0)
    _legend(middle, fail)

    heap = bottom.twinx()
    for node in (target,) if target in nodes else nodes:  # a node alone: the others are idle
        cpu = [_node(r, node, "cpu_pct_of_quota") for r in steps]
        if all(np.isnan(cpu)):
            continue
        bottom.plot(mid, cpu, "o-", color=colour_of(node), label=f"{node} CPU % of quota")
        bottom.plot(mid, [_node(r, node, "gc_time_pct") for r in steps], "x--", color=colour_of(node),
                    label=f"{node} % time in GC")
        heap.plot(mid, [_node(r, node, "heap_used_mb_mean") for r in steps], ":", color=colour_of(node),
                  label=f"{node} heap used MB")
    bottom.set_ylabel("% (CPU of quota, time in GC)")
    bottom.set_ylim(bottom=0)
    heap.set_ylabel("heap used, MB")
    heap.set_ylim(bottom=0)
    _legend(bottom, heap)
    bottom.set_xlabel("minutes since the run started (each bar: one step)")
    if steps:
        first, last = min(x), max(x + width)
        for event in events or []:
            at = (event["epoch"] - t0) / 60
            if first <= at <= last:
                _mark(at, f"{event['node']} {event['state']}", (top, middle, bottom),
                      "tab:red" if event["state"] == "DOWN" else "tab:green")
    return save(fig, path)


def _mark(x: float, text: str, axes, colour: str) -> None:
    """A moment (a node going DOWN, a fault) across every panel, named at the top of the first."""
    for axis in axes:
        axis.axvline(x, color=colour, linestyle="-.", linewidth=1.2)
    axes[0].annotate(text, (x, 1), xycoords=("data", "axes fraction"), rotation=90, va="top", ha="right",
                     fontsize=8, color=colour)


def _p99_panel(axis, t, rows: list[dict], xlabel: str) -> None:
    """HAProxy's p99 per second (haproxy_log.per_second's rows), on a log axis."""
    axis.plot(t, [r["p99_ms"] if r["p99_ms"] is not None else np.nan for r in rows], "-", color="black",
              label="p99 of HAProxy's total time, ms")
    axis.set_yscale("log")
    axis.set_ylabel("ms (log)")
    axis.set_xlabel(xlabel)
    _legend(axis)


def stress(analysis: dict, path: Path) -> Path:
    """bench-stress, second by second (HAProxy's request log): offered rate, answered, failed, p99; the
    overload shaded, the capacity and the moment the load fell back marked with the time to recover."""
    rows = analysis["per_second"]
    t = np.arange(len(rows)) + 0.5
    fig, (top, bottom) = plt.subplots(2, 1, figsize=(10, 7), sharex=True)
    back = analysis["time_to_recover_s"]
    fig.suptitle(f"stress on {analysis['target']}: {analysis['rates_rps']['overload']:g}/s for "
                 f"{analysis['phases_s']['overload'][1] - analysis['phases_s']['overload'][0]:.0f} s — recovered "
                 + (f"{back:g} s after the load fell" if back is not None else "not within the run"))
    offered = np.zeros(len(rows))
    for phase, (a, b) in analysis["phases_s"].items():
        offered[int(a):int(np.ceil(b))] = analysis["rates_rps"][phase]
    for axis in (top, bottom):
        a, b = analysis["phases_s"]["overload"]
        axis.axvspan(a, b, color="mistyrose", label="overload" if axis is top else None)
    top.step(t, offered, where="mid", color="grey", label="offered /s")
    top.plot(t, [r["ok"] for r in rows], "-", color="black", label="answered /s")
    top.bar(t, [r["failed"] for r in rows], width=1.0, color="tab:red", alpha=0.7, label="failed /s")
    top.axhline(analysis["capacity_rps"], color="tab:purple", linestyle="--", linewidth=1,
                label=f"capacity {analysis['capacity_rps']:g}/s")
    top.set_ylabel("requests/s")
    _legend(top)
    _p99_panel(bottom, t, rows, "seconds since the first step started")
    _mark(analysis["drop_s"], "load falls", (top, bottom), "tab:blue")
    if back is not None:
        _mark(analysis["drop_s"] + back, "recovered", (top, bottom), "tab:green")
    return save(fig, path)


def failover(analysis: dict, path: Path, nodes: tuple[str, ...]) -> Path:
    """bench-failover, second by second (HAProxy's request log): answers by node, failed requests, the 99th
    percentile of HAProxy's time, and the moments: fault, DOWN, its undoing, UP, first answer."""
    rows = analysis["per_second"]
    t = np.arange(len(rows)) + 0.5
    fig, (top, bottom) = plt.subplots(2, 1, figsize=(10, 7), sharex=True)
    fig.suptitle(f"failover: {analysis['fault']} {analysis['node']} at {analysis['rate_rps']:g}/s — "
                 f"{analysis['failed']} failed, detection "
                 + (f"{analysis['detection_s']:.2f} s" if analysis["detection_s"] is not None else "never"))
    below = np.zeros(len(rows))
    for node in nodes:
        counts = np.array([r["by_server"].get(node, 0) for r in rows], dtype=float)
        top.bar(t, counts, bottom=below, width=1.0, color=colour_of(node), label=f"answered by {node}")
        below += counts
    top.bar(t, [r["failed"] for r in rows], bottom=below, width=1.0, color="tab:red", label="failed")
    top.set_ylabel("requests ended in each second")
    _legend(top)
    _p99_panel(bottom, t, rows, "seconds since the failover step started")
    undone_by = analysis.get("undone_by") or ("restart" if analysis["fault"] == "kill" else "thaw")
    for key, text, colour in (("fault_s", analysis["fault"], "tab:red"), ("detected_s", "DOWN", "tab:orange"),
                              ("recovered_s", undone_by, "tab:green"),
                              ("up_s", "UP", "tab:olive"), ("first_answer_s", "first answer", "tab:cyan")):
        if analysis.get(key) is not None:
            _mark(analysis[key], text, (top, bottom), colour)
    return save(fig, path)


def single_vs_cluster(summary: Summary, cluster, quotas: dict[str, float], path: Path,
                      nodes: tuple[str, ...]) -> Path:
    """`cluster`: bench-cluster's findings (capbench/kinds/cluster_findings.py): ΣX_i, X_cluster (under WEIGHTS=auto the one under
    capacity weights) and E."""
    targets = {**{n: t.capacity_rps for n, t in summary.targets.items()}, "cluster": cluster.cluster_rps}
    names = [n for n in (*nodes, "cluster") if n in targets]
    caps = [targets[n] or 0 for n in names]
    fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4.5), gridspec_kw={"width_ratios": [3, 2]})
    labels = [*names[:-1], "ΣX_i", "X_cluster"] if "cluster" in names else names
    values = [*caps[:-1], cluster.sum_nodes_rps or 0, caps[-1]] if "cluster" in names else caps
    colours = [colour_of(n) for n in names[:-1]] + ["lightgrey", colour_of("cluster")] \
        if "cluster" in names else [colour_of(n) for n in names]
    bars = left.bar(labels, values, color=colours)
    left.bar_label(bars, fmt="%.0f")
    e = cluster.efficiency
    left.set_title(f"capacity, requests/s — E = X_cluster / ΣX_i = {e:.3f}" if e else
                   "capacity, requests/s — E not measured: the testbed's ceiling" if cluster.testbed_efficiency
                   else "capacity, requests/s")
    ceiling = (summary.testbed_ceiling or {}).get("ceiling_rps")
    if ceiling:  # what the generator and HAProxy carry beside all the nodes: X_cluster near it is the testbed's
        left.axhline(ceiling, color="tab:red", linestyle="--", linewidth=1)
        left.annotate(f"testbed ceiling beside all the nodes ≈ {ceiling:.0f}/s", (0, ceiling), xytext=(2, 3),
                      textcoords="offset points", color="tab:red", fontsize=8)
    left.set_ylabel("requests/s at the SLO")
    per_cpu_names = [n for n in names if n in quotas or n == "cluster"]
    per_cpu = []
    for n in per_cpu_names:
        quota = sum(quotas.get(m, 0) for m in nodes) if n == "cluster" else quotas.get(n)
        per_cpu.append((targets[n] or 0) / quota if quota else 0)
    bars = right.bar(per_cpu_names, per_cpu, color=[colour_of(n) for n in per_cpu_names])
    right.bar_label(bars, fmt="%.0f")
    right.set_title("capacity per CPU of quota")
    right.set_ylabel("requests/s per CPU")
    return save(fig, path)


def load_balance(shares: dict[str, dict[str, float | None]], path: Path) -> Path:
    """shares: {node: {"haproxy": %, "tomcat": %, "weight": %, "capacity": %}}."""
    kinds = (("haproxy", "served (HAProxy count)"), ("tomcat", "served (Tomcat count)"),
             ("weight", "weight share"), ("capacity", "share of ΣX_i"))
    nodes = list(shares)
    fig, ax = plt.subplots(figsize=(9, 4.5))
    step = 0.8 / len(kinds)
    for k, (kind, label) in enumerate(kinds):
        values = [shares[n].get(kind) or 0 for n in nodes]
        bars = ax.bar(np.arange(len(nodes)) + k * step, values, width=step, label=label)
        ax.bar_label(bars, fmt="%.1f", fontsize=7)
    ax.set_xticks(np.arange(len(nodes)) + 0.4 - step / 2, nodes)
    ax.set_ylabel("% of the cluster")
    ax.set_title("load balance at the cluster's capacity")
    ax.legend(fontsize=8)
    return save(fig, path)


def latency_spectrum(spectra: dict[str, list[tuple[float, float]]], path: Path) -> Path:
    """spectra: {label: [(percentile, ms), ...]}; x is 1 / (1 - percentile), log scale."""
    fig, ax = plt.subplots(figsize=(9, 4.5))
    ticks = [0, 50, 90, 99, 99.9, 99.99, 99.999]
    for label, points in spectra.items():
        pts = [(p, v) for p, v in points if p < 100 and v is not None]
        ax.plot([1 / (1 - p / 100) for p, _ in pts], [v for _, v in pts], "o-", markersize=3, label=label,
                color=NODE_COLOURS.get(label.split()[0]))
    ax.set_xscale("log")
    ax.set_xticks([1 / (1 - t / 100) for t in ticks], [f"{t:g}%" for t in ticks])
    ax.set_xlabel("percentile")
    ax.set_ylabel("corrected latency, ms")
    ax.set_title("latency by percentile at capacity")
    ax.grid(True, which="major", alpha=0.3)
    ax.legend(fontsize=8)
    return save(fig, path)


def usl_curve(n: list[float], x: list[float], fitted, path: Path, what: str = "concurrency") -> Path:
    fig, ax = plt.subplots(figsize=(9, 4.5))
    ax.plot(n, x, "o", color="black", label="measured")
    if fitted is not None:
        grid = np.linspace(1, max(max(n), (fitted.peak_n or 0) * 1.2), 200)
        ax.plot(grid, fitted.throughput(grid), "-", color="tab:blue",
                label=f"USL σ={fitted.sigma:.4f} κ={fitted.kappa:.5f} λ={fitted.lam:.1f} R²={fitted.r_squared:.3f}")
        ax.plot(grid, fitted.lam * grid, ":", color="grey", label="linear (λN)")
        if fitted.peak_n:
            ax.axvline(fitted.peak_n, color="tab:red", linestyle="--", linewidth=1, label=f"N* = {fitted.peak_n:.1f}"
                       + (" (extrapolated)" if fitted.peak_n > max(n) else ""))
        ax.set_ylim(0, max(max(x), fitted.peak_x or 0) * 1.3)
    else:
        ax.set_ylim(0, max(x) * 1.3)  # from zero, so the points' ratio reads right even without a curve
        ax.text(0.5, 0.5, f"{len(set(n))} distinct N: the USL needs at least 4 (make bench-usl)",
                transform=ax.transAxes, ha="center", color="grey")
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))  # connections and nodes are whole
    ax.set_xlabel(what)
    ax.set_ylabel("throughput, requests/s")
    ax.set_title("Universal Scalability Law" + ("" if fitted is not None else " (too few points to fit)"))
    ax.legend(fontsize=8)
    return save(fig, path)


def scaleout_curve(points: list[dict], fitted, path: Path) -> Path:
    """bench-scaleout: X(N) (each repeat, the median joined) against the ideal and the USL over N; E(N) beneath.
    A point the harness limited is drawn hollow: it is not in the fit."""
    fig, (top, bottom) = plt.subplots(2, 1, figsize=(9, 6.5), sharex=True, height_ratios=(2, 1))
    n = [p["n"] for p in points]
    top.plot(n, [p["ideal_rps"] or np.nan for p in points], "--", color="grey",
             label=f"ideal ({scaling.ideal_label(points)})")
    top.plot(n, [p["capacity_rps"] or np.nan for p in points], "-", color="tab:purple", label="X(N), median")
    for p in points:
        style = {"mfc": "none"} if p["limited_by"] else {}
        top.plot([p["n"]] * len(p["repeats"]), p["repeats"], "o", color="tab:purple", **style)
    if fitted is not None:
        grid = np.linspace(1, max(n), 100)
        top.plot(grid, fitted.throughput(grid), "-", color="tab:blue", linewidth=1,
                 label=f"USL σ={fitted.sigma:.4f} κ={fitted.kappa:.5f} R²={fitted.r_squared:.3f}")
    top.set_ylim(0, max([p["ideal_rps"] or 0 for p in points] + [max(p["repeats"] or [0]) for p in points]) * 1.15)
    top.set_ylabel("capacity, requests/s")
    top.set_title("scale-out: capacity by nodes in rotation" + ("" if fitted is not None else " (no USL fit)"))
    top.legend(fontsize=8, loc="upper left")
    bottom.plot(n, [p["efficiency"] or np.nan for p in points], "o-", color="tab:purple")
    bottom.axhline(1.0, color="grey", linestyle="--", linewidth=1)
    bottom.set_ylim(0, max([1.2] + [p["efficiency"] * 1.1 for p in points if p["efficiency"]]))  # E > 1 shows too
    bottom.set_ylabel("E(N) = X(N) / ideal")
    bottom.set_xlabel("nodes in rotation")
    bottom.xaxis.set_major_locator(MaxNLocator(integer=True))
    return save(fig, path)


def _node(record: StepRecord, node: str, key: str) -> float:
    value = (record.host_metrics or {}).get(node, {}).get(key)
    return np.nan if value is None else value


def _sum_nodes(record: StepRecord, key: str) -> float:
    values = [_node(record, n, key) for n in node_figures(record.host_metrics)]
    present = [v for v in values if not np.isnan(v)]
    return sum(present) if present else np.nan


def _legend(*axes) -> None:
    handles, labels = [], []
    for ax in axes:
        h, lab = ax.get_legend_handles_labels()
        handles += h
        labels += lab
    axes[0].legend(handles, labels, fontsize=7, loc="upper left")


def balancing(choices: dict, sum_nodes: float | None, path: Path) -> Path:
    """choices: bench-cluster's balancing choices by label (capbench/kinds/cluster_findings.py, BalancingChoice), measured in one
    run."""
    labels = list(choices)
    caps = [choices[c].capacity_rps or 0 for c in labels]
    fig, ax = plt.subplots(figsize=(9, 4.5))
    bars = ax.bar([f"{c}\n{choices[c].balance} "
                   + ":".join(str(w) for w in choices[c].weights.values()) for c in labels], caps,
                  color=["tab:gray", "tab:purple", "tab:cyan"][:len(labels)])
    ax.bar_label(bars, labels=[f"{cap:.0f}/s\nE = {choices[c].efficiency:.3f}" if choices[c].efficiency
                               else f"{cap:.0f}/s" for c, cap in zip(labels, caps)])
    if sum_nodes:
        ax.axhline(sum_nodes, color="black", linestyle="--", label=f"ΣX_i = {sum_nodes:.0f}/s (E = 1)")
        ax.legend(loc="lower right")
    ax.set_ylim(0, max([*caps, sum_nodes or 0]) * 1.25 or 1)
    ax.set_ylabel("cluster capacity, requests/s at the SLO")
    ax.set_title("the cluster under each balancing choice (weights node1:node2:node3)")
    return save(fig, path)


def variants(rows: list[dict], path: Path) -> Path:
    """rows: [{"variant", "node1_rps", "cluster_rps", "alloc_mb_per_s", "gc_time_pct", "blocked"}] in order."""
    names = [r["variant"] for r in rows]
    x = np.arange(len(names))
    fig, (top, bottom) = plt.subplots(2, 1, figsize=(10, 8), sharex=True)
    for offset, key, label, who in ((-0.2, "node1_rps", "node1 alone", "node1"),
                                    (0.2, "cluster_rps", "the cluster", "cluster")):
        bars = top.bar(x + offset, [r[key] or 0 for r in rows], width=0.4, label=label, color=colour_of(who))
        top.bar_label(bars, fmt="%.0f")
    top.set_ylabel("capacity, requests/s at the SLO")
    top.set_title("the study's investigation: capacity of each Grinder variant")
    top.legend()
    bars = bottom.bar(x - 0.27, [r["alloc_mb_per_s"] or 0 for r in rows], width=0.27, color="tab:brown",
                      label="allocation, MB/s")
    bottom.bar_label(bars, fmt="%.0f", fontsize=8)
    bottom.set_ylabel("MB/s allocated (node1 at capacity)")
    right = bottom.twinx()
    bars = right.bar(x, [r["gc_time_pct"] or 0 for r in rows], width=0.27, color="tab:olive", label="% time in GC")
    right.bar_label(bars, fmt="%.1f", fontsize=8)
    bars = right.bar(x + 0.27, [r["blocked"] or 0 for r in rows], width=0.27, color="tab:red",
                     label="request threads BLOCKED (mean of dumps)")
    right.bar_label(bars, fmt="%.1f", fontsize=8)
    right.set_ylabel("% time in GC · threads blocked")
    handles = bottom.get_legend_handles_labels()[0] + right.get_legend_handles_labels()[0]
    bottom.legend(handles, [h.get_label() for h in handles], fontsize=8, loc="upper right")
    bottom.set_xticks(x, names)
    bottom.set_title("evidence at node1's capacity (PCP and thread dumps)")
    return save(fig, path)
