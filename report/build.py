"""report.html for one run, from its results folder alone: figures/*.png, a summary table, the SLO, the
driver and versions, the profile, the bottleneck hints at each capacity, the USL fit where there are points.
The page is self-contained: every figure is inlined, so it opens offline and survives being mailed."""
from __future__ import annotations

import base64
from dataclasses import asdict
from pathlib import Path

from jinja2 import Environment, FileSystemLoader, select_autoescape

from metrics.catalogue import SHOWN
from report import calibration, efficiency, figures, hints, scaleout, story, usl
from rundata import jsonl, workload
from rundata.records import SEARCH_PHASES
from rundata.run import node_cpus, node_numbers, node_values, nodes_of
from rundata.summary import of_label, serving_nodes

TEMPLATE_DIR = Path(__file__).parent


class ReportError(ValueError):
    """The folder is not a run's results folder (what is missing, what is expected)."""


def load_run(run_dir: Path) -> tuple[dict, dict, list[dict]]:
    missing = [name for name in ("run.json", "summary.json", "steps.jsonl") if not (run_dir / name).is_file()]
    if not run_dir.is_dir() or missing:
        raise ReportError(f"{run_dir} is not a run's results folder: missing {', '.join(missing) or 'the folder'} "
                          "(give RUN=<run-id> of a folder under results/)")
    return (jsonl.read_json(run_dir / "run.json") or {}, jsonl.read_json(run_dir / "summary.json") or {},
            jsonl.read(run_dir / "steps.jsonl"))


def slug(label: str) -> str:
    return "-".join(label.split())


def capacity_step(target: str, summary_target: dict, records: list[dict]) -> dict | None:
    """The step the capacity figure comes from: the one the metrics were taken at, else the last passed step
    of the target at that rate."""
    at = (summary_target.get("metrics_at_capacity") or {}).get("step")
    if at is not None:
        return next((r for r in records if r["step"] == at), None)
    cap = summary_target.get("capacity_rps")
    passed = [r for r in records if r["target"] == target and r.get("passed") and r["offered_rps"] == cap]
    return passed[-1] if passed else None


def next_step_up(target: str, capacity: float | None, records: list[dict]) -> dict | None:
    """The lowest failed step above the capacity: what broke the SLO there."""
    if capacity is None:
        return None
    above = [r for r in records if r["target"] == target and not r.get("passed") and r["offered_rps"] > capacity
             and r.get("phase") != "warmup"]
    return min(above, key=lambda r: r["offered_rps"]) if above else None


def spectrum_of(record: dict) -> list[tuple[float, float]]:
    """The latency spectrum recorded with the step, or its five percentiles where it has none."""
    if record.get("latency_spectrum_ms"):
        return [(float(p), float(v)) for p, v in record["latency_spectrum_ms"]]
    names = {"p50": 50, "p90": 90, "p99": 99, "p99.9": 99.9}
    return [(p, record["latency_ms"][k]) for k, p in names.items() if record.get("latency_ms", {}).get(k) is not None]


def balance_shares(summary: dict, run: dict, record: dict | None, weights: dict | None = None) -> dict | None:
    """Each node's share of the step's requests, its weight's share (the profile's, or `weights` the run set
    through the runtime API) and its share of the nodes' capacities."""
    if record is None or "host_metrics" not in record:
        return None
    checks = record["host_metrics"].get("requests_cross_check", {})
    nodes = nodes_of(run)
    if weights is None:
        weights = node_numbers(run.get("cluster_settings", {}), "WEIGHT", nodes)
    caps = {n: summary["targets"].get(n, {}).get("capacity_rps") for n in nodes}

    def share(values: dict) -> dict:
        total = sum(v for v in values.values() if v)
        return {k: (100 * v / total if v and total else None) for k, v in values.items()}

    haproxy = share({n: checks.get(n, {}).get("haproxy_responses") for n in nodes})
    tomcat = share({n: checks.get(n, {}).get("tomcat_requests") for n in nodes})
    weight, capacity = share({n: weights.get(n) for n in nodes}), share(caps)
    return {n: {"haproxy": haproxy[n], "tomcat": tomcat[n], "weight": weight[n], "capacity": capacity[n]}
            for n in nodes}


def usl_section(summary: dict) -> dict:
    """Points and fit: a concurrency sweep (bench-usl, fitted by the run), else the node-count points a cluster
    run has."""
    points = summary.get("usl_points")
    what = "closed connections on node1"
    fitted = summary.get("usl_fit")
    if points and fitted:
        return recorded_fit(what, points, fitted)
    scaled = summary.get("scaleout")
    if scaled:  # bench-scaleout: every repeat the harness did not limit, and the fit the run made of them
        points = [{"n": p["n"], "throughput_rps": x} for p in scaled["points"] if not p["limited_by"]
                  for x in p["repeats"]]
        return recorded_fit("nodes in rotation", points, scaled.get("fit") or {"error": "no fit recorded"})
    if not points and summary.get("kind") == "cluster":
        what = "nodes in rotation"
        points = [{"n": 1, "throughput_rps": summary["targets"].get("node1", {}).get("capacity_rps")},
                  {"n": 3, "throughput_rps": summary.get("cluster_rps")}]
        points = [p for p in points if p["throughput_rps"]]
    if not points:
        return {"what": what, "points": [], "fit": None, "error": "no points: run make bench-usl"}
    n = [p["n"] for p in points]
    x = [p["throughput_rps"] for p in points]
    try:
        fit = usl.fit(n, x)
        return {"what": what, "points": points, "fit": fit, "error": None}
    except usl.UslError as problem:
        return {"what": what, "points": points, "fit": None, "error": str(problem),
                "failed": isinstance(problem, usl.UslFitFailed)}


def recorded_fit(what: str, points: list[dict], fitted: dict) -> dict:
    """The section for a fit the run made (summary.json's form: the fit, or its error)."""
    if "error" in fitted:
        return {"what": what, "points": points, "fit": None, "error": fitted["error"],
                "failed": bool(fitted.get("failed"))}
    return {"what": what, "points": points, "fit": usl.UslFit.from_dict(fitted), "error": None}


def _inline(path: Path) -> str:
    return "data:image/png;base64," + base64.b64encode(path.read_bytes()).decode()


def build(run_dir: Path) -> Path:
    run, summary, records = load_run(run_dir)
    fig_dir = run_dir / "figures"
    fig_dir.mkdir(exist_ok=True)
    measured = [r for r in records if r.get("phase") in ("warmup", *SEARCH_PHASES)]
    t0 = min((r["start_epoch"] for r in measured), default=run.get("started_epoch", 0))
    nodes = nodes_of(run)
    cpus = node_cpus(run)  # each node's quota, or its JVM's processors without one
    machine = calibration.of(summary) or calibration.of(run)
    # The probe is a Grinder call: its calibrated cores count the run's own work only when the run grinds.
    grinding = run.get("settings", {}).get("workload", "grind") == "grind"
    made: list[tuple[str, Path]] = []
    rows, hint_blocks, spectra = [], [], {}
    for target, t in summary.get("targets", {}).items():
        name = target.split()[0] if target.split()[0] in (*nodes, "cluster") else target
        cap = t.get("capacity_rps")
        steps_of = [r for r in measured if of_label(r, target)]
        if steps_of and summary.get("kind") != "overhead":
            made.append((f"{target}: capacity summary",
                         figures.capacity_summary(name, steps_of, cap, t0, fig_dir / f"capacity-{slug(target)}.png",
                                                  nodes, title=target, events=summary.get("lb_events"))))
        own = [r for r in records if of_label(r, target) and r.get("phase") != "evidence"]
        at = capacity_step(name, t, own)
        up = next_step_up(name, cap, own)
        found = hints.hints_for((at or {}).get("host_metrics"), at) if at else []
        hint_blocks.append({"target": target, "step": at, "hints": [asdict(h) for h in found],
                            "monitored": bool(at and "host_metrics" in at), "next_up": up,
                            "nodes": {node: [f.get(x.name) for x in SHOWN]
                                      for node, f in serving_nodes((at or {}).get("host_metrics")).items()}})
        if at and at.get("latency_ms"):
            spectra[f"{target} at {cap:g}/s"] = spectrum_of(at)  # overhead runs: "node1 monitor on" etc.
        rows.append({"target": target, "capacity": cap, "repeats": t.get("repeats", []),
                     "spread_pct": t.get("spread_pct"), "p99": (at or {}).get("latency_ms", {}).get("p99"),
                     "step": (at or {}).get("step"), **calibrated(cap if grinding else None, name, machine, cpus)})
    # The cluster's capacity: its one search, or under WEIGHTS=auto the search under capacity weights.
    cluster_label = "cluster" if "cluster" in summary.get("targets", {}) else \
        (summary.get("balancing") or {}).get("weighted", {}).get("label")
    if summary.get("kind") == "cluster" and cluster_label in summary.get("targets", {}):
        made.append(("single vs cluster", figures.single_vs_cluster(summary, cpus, fig_dir / "single-vs-cluster.png", nodes)))
        weights = (summary.get("balancing") or {}).get("weighted", {}).get("weights")
        shares = balance_shares(summary, run, capacity_step("cluster", summary["targets"][cluster_label], records),
                                weights)
        if shares:
            made.append(("load balance", figures.load_balance(shares, fig_dir / "load-balance.png")))
    choices = summary.get("balancing") or {}
    if len(choices) > 1:
        made.append(("balancing choices", figures.balancing(choices, summary.get("sum_nodes_rps"),
                                                            fig_dir / "balancing.png")))
    variant_rows = story.variant_lines(summary) if summary.get("kind") == "variants" else []
    noise = noise_band_pct(run, summary)
    if variant_rows:
        made.append(("the study's investigation", figures.variants(variant_rows, fig_dir / "variants.png")))
    if spectra:
        made.append(("latency spectrum", figures.latency_spectrum(spectra, fig_dir / "latency-spectrum.png")))
    failover_info = jsonl.read_json(run_dir / "failover.json")
    if failover_info:
        made.append(("failover", figures.failover(failover_info, fig_dir / "failover.png", nodes)))
    stress_info = jsonl.read_json(run_dir / "stress.json")
    if stress_info:
        made.append(("overload and recovery", figures.stress(stress_info, fig_dir / "stress.png")))
    usl_info = usl_section(summary)
    by_step = {r["step"]: r for r in records}
    for point in usl_info["points"]:  # what node1 did at each level, where it was monitored
        point["node1"] = (by_step.get(point.get("step"), {}).get("host_metrics") or {}).get("node1")
    if usl_info["points"]:
        made.append(("USL", figures.usl_curve([p["n"] for p in usl_info["points"]],
                                             [p["throughput_rps"] for p in usl_info["points"]], usl_info["fit"],
                                             fig_dir / "usl.png", usl_info["what"])))
    if summary.get("scaleout"):
        made.append(("scale-out", figures.scaleout_curve(summary["scaleout"]["points"], usl_info["fit"],
                                                         fig_dir / "scaleout.png")))
    env = Environment(loader=FileSystemLoader(TEMPLATE_DIR), autoescape=select_autoescape(["html"]))
    html = env.get_template("template.html").render(
        workload=workload.describe(run.get("settings") or {}),
        run=run, summary=summary, rows=rows, hint_blocks=hint_blocks, usl=usl_info, choices=choices,
        calibration=machine, calibration_ms=calibration.node_ms(machine), caveat=efficiency.caveat,
        variants=variant_rows, noise_pct=noise, failover=failover_info, stress=stress_info,
        sessions=summary.get("sessions"),
        story=story.story(summary, noise, repeated=any(len(t.get("repeats", [])) > 1 for t in summary["targets"].values()),
                          quota_ratio=sum(cpus.values()) / cpus["node1"] if cpus.get("node1") else None)
        if variant_rows else [],
        figures=[{"title": title, "src": _inline(path), "file": path.name} for title, path in made],
        profile=profile_rows(run), thresholds=thresholds(), shown=[f.heading for f in SHOWN],
        scaleout_ideal=scaleout.ideal_label((summary.get("scaleout") or {}).get("points", [])))
    out = run_dir / "report.html"
    tmp = out.with_suffix(".html.tmp")
    tmp.write_text(html)
    tmp.replace(out)
    return out


def calibrated(capacity: float | None, name: str, machine: dict | None, cpus: dict[str, float]) -> dict:
    """The capacity per calibrated core (report/calibration.py) and its share of the CPU quota behind it (a
    node's own; the cluster's, all the nodes'), where the run has a calibration."""
    cores = calibration.calibrated_cores(capacity, name, machine)
    quota = cpus.get(name) if name in cpus else (sum(cpus.values()) if name == "cluster" and cpus else None)
    return {"calibrated_cores": cores, "quota": quota,
            "quota_pct": 100 * cores / quota if cores is not None and quota else None}


def noise_band_pct(run: dict, summary: dict) -> float:
    """The band within which two capacities of this run cannot be told apart: the search's precision, or the
    widest repeat spread where searches were repeated."""
    spreads = [t.get("spread_pct") or 0.0 for t in summary.get("targets", {}).values()]
    return max([run.get("settings", {}).get("precision_pct") or 0.0, *spreads])


def profile_rows(run: dict) -> list[dict]:
    settings, actual, nodes = run.get("cluster_settings", {}), run.get("nodes") or {}, nodes_of(run)
    fields = {field: node_values(settings, field, nodes) for field in ("CPUS", "MEM", "HEAP", "GC", "WEIGHT")}
    rows = []
    for node in nodes:
        info = actual.get(node) or {}
        quota = fields["CPUS"].get(node)
        rows.append({"node": node, "cpus": "none (its machine)" if quota == "0" else quota,
                     "mem": fields["MEM"].get(node),
                     "heap": fields["HEAP"].get(node), "gc_setting": fields["GC"].get(node),
                     "gc_used": info.get("gc"), "heap_max_mb": (int(info["heap_max_bytes"]) // 2**20
                                                               if info.get("heap_max_bytes") else None),
                     "jvm_cpus": info.get("available_processors"), "java": info.get("java_version"),
                     "weight": fields["WEIGHT"].get(node)})
    return rows


def thresholds() -> dict:
    return {"cpu": hints.CPU_SATURATED_PCT, "lock_busy": hints.LOCK_BUSY_THREADS, "lock_cpu": hints.LOCK_CPU_PCT,
            "gc": hints.GC_BOUND_PCT, "late": hints.GENERATOR_LATE_PCT, "machine": hints.GENERATOR_MACHINE_CPU_PCT,
            "throttled": hints.THROTTLED_PCT, "pool_waiting": hints.POOL_WAITING_THREADS,
            "pool_busy": hints.POOL_BUSY_PCT, "db_locks": hints.DB_LOCK_WAITS}
