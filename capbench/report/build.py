"""report.html for one run, from its results folder alone: figures/*.png, a summary table, the SLO, the
driver and versions, the profile, the bottleneck hints at each capacity, the USL fit where there are points,
and the kind's own section (capbench/report/sections.py).
The page is self-contained: every figure is inlined, so it opens offline and survives being mailed."""
from __future__ import annotations

import base64
import math
from dataclasses import asdict
from pathlib import Path

from jinja2 import ChoiceLoader, DictLoader, Environment, FileSystemLoader, select_autoescape

from capbench.analysis import calibration, efficiency, hints, memory_capacity, not_measured, usl_fit
from capbench.metrics.catalogue import SHOWN
from capbench.profiling import record as profile_record
from capbench.report import figures, profiles
from capbench.report.client_leg_words import client_leg_words
from capbench.report.sections import Figure, ReportSection, RunResults
from capbench.rundata import hlog, jsonl, workload
from capbench.rundata.layout import RunPaths
from capbench.rundata.records import AT_CAPACITY_PHASES, SEARCH_PHASES, StepRecord, read_steps
from capbench.rundata.run import RunRecord, node_values, nodes_of
from capbench.rundata.summary import Summary, TargetSummary, of_label, serving_nodes

TEMPLATE_DIR = Path(__file__).parent


class ReportError(ValueError):
    """The folder is not a run's results folder (what is missing, what is expected)."""


def load_run(run_dir: Path) -> RunResults:
    paths = RunPaths(run_dir)
    missing = [p.name for p in (paths.run_json, paths.summary, paths.steps) if not p.is_file()]
    if not run_dir.is_dir() or missing:
        raise ReportError(f"{run_dir} is not a run's results folder: missing {', '.join(missing) or 'the folder'} "
                          "(give RUN=<run-id> of a folder under results/)")
    return RunResults(run_dir, RunRecord.read(paths.run_json), Summary.from_json(jsonl.read_json(paths.summary) or {}),
                      read_steps(paths.steps))


def slug(label: str) -> str:
    return "-".join(label.split())


def capacity_step(target: str | None, summary_target: TargetSummary, records: list[StepRecord]) -> StepRecord | None:
    """The step the capacity figure comes from: the one the metrics were taken at, else the last passed step
    of the target at that rate (target None: the records are already the search label's, whose steps may
    fall on several nodes, as a duet's builds change slots). A median no step ran at (of an even number of
    repeats) takes the passed rate nearest to it, the lower of two as near, as capbench/rundata/summary.py's metrics_at."""
    at = (summary_target.metrics_at_capacity or {}).get("step")
    if at is not None:
        return next((r for r in records if r.step == at), None)
    cap = summary_target.capacity_rps
    passed = [r for r in records if target in (None, r.target) and r.passed and r.phase not in AT_CAPACITY_PHASES]
    nearest = min((r.result.offered_rps for r in passed), key=lambda rate: (abs(rate - cap), rate),
                  default=None) if cap is not None else None
    at_rate = [r for r in passed if r.result.offered_rps == nearest]
    return at_rate[-1] if at_rate else None


def next_step_up(target: str | None, capacity: float | None, records: list[StepRecord]) -> StepRecord | None:
    """The lowest failed step above the capacity: what broke the SLO there (target None: as capacity_step)."""
    if capacity is None:
        return None
    above = [r for r in records if target in (None, r.target) and not r.passed and r.result.offered_rps > capacity
             and r.phase != "warmup"]
    return min(above, key=lambda r: r.result.offered_rps) if above else None


def spectrum_of(record: StepRecord, run_dir: Path) -> list[tuple[float, float]]:
    """The step's latency by percentile from its whole histogram (its .hlog), at HdrHistogram's ticks: the gap to
    100 % halved every four points, to the last request; a run from before the logs were kept gives the spectrum
    recorded with the step, or its five percentiles where it has none."""
    path = RunPaths(run_dir).hlog(record.step)
    histogram = hlog.read(path) if path.is_file() else None
    if histogram is not None and histogram.get_total_count():
        halvings = max(1, math.ceil(math.log2(histogram.get_total_count())))
        return hlog.spectrum_ms(histogram, tuple(100 * (1 - 0.5 ** (i / 4)) for i in range(4 * halvings)))
    if record.result.latency_spectrum_ms:
        return [(float(p), float(v)) for p, v in record.result.latency_spectrum_ms]
    names = {"p50": 50, "p90": 90, "p99": 99, "p99.9": 99.9}
    return [(p, record.result.latency_ms[k]) for k, p in names.items() if record.result.latency_ms.get(k) is not None]


def usl_section(summary: Summary, section: ReportSection | None = None) -> dict:
    """Points and fit as the kind's section gives them (ReportSection.usl): the fit its run made (bench-usl's
    over one node's concurrency, bench-scaleout's over N), else one fitted here to its points."""
    given = section.usl(summary) if section is not None and section.usl is not None else None
    if not given or not given[1]:
        return {"what": "closed connections on node1", "points": [], "fit": None,
                "error": "no points: run make bench-usl"}
    what, points, fitted = given
    if fitted:
        return recorded_fit(what, points, fitted)
    try:
        fit = usl_fit.fit([p["n"] for p in points], [p["throughput_rps"] for p in points])
        return {"what": what, "points": points, "fit": fit, "error": None}
    except usl_fit.UslError as problem:
        return {"what": what, "points": points, "fit": None, "error": str(problem),
                "failed": isinstance(problem, usl_fit.UslFitFailed)}


def recorded_fit(what: str, points: list[dict], fitted: dict) -> dict:
    """The section for a fit the run made (summary.json's form: the fit, or its error)."""
    if "error" in fitted:
        return {"what": what, "points": points, "fit": None, "error": fitted["error"],
                "failed": bool(fitted.get("failed"))}  # the fit's error as usl_fit wrote it: `failed` may be absent
    return {"what": what, "points": points, "fit": usl_fit.UslFit.from_dict(fitted), "error": None}


def _inline(path: Path) -> str:
    return "data:image/png;base64," + base64.b64encode(path.read_bytes()).decode()


def build(run_dir: Path, section: ReportSection | None = None) -> Path:
    """report.html of the run in run_dir; section: its kind's part (Kind.shows.section), None for a kind without one."""
    results = load_run(run_dir)
    section = section or ReportSection()
    run, summary, records = results.run, results.summary, results.steps
    measured = [r for r in records if r.phase in ("warmup", *SEARCH_PHASES)]
    t0 = min((r.result.start_epoch for r in measured), default=run.started_epoch or 0)
    nodes, cpus = results.nodes, results.cpus
    machine = calibration.of(summary) or calibration.of(run)
    # The probe is a Grinder call: its calibrated cores count the run's own work only when the run grinds (not
    # the shared database's queries, not a user's requests, SCENARIO_FILE).
    grinding = run.settings.get("workload", "grind") == "grind" and not run.settings.get("scenario_file")
    made: list[Figure] = []
    rows, hint_blocks, spectra = [], [], {}
    recorded = profile_record.read(results.paths.analysis("profiles"))
    raw = asdict(summary)  # as summary.json holds it, for capbench/analysis/not_measured.py
    for target, t in summary.targets.items():
        name = target.split()[0] if target.split()[0] in (*nodes, "cluster") else target
        cap = t.capacity_rps
        steps_of = [r for r in measured if of_label(r, target)]
        if steps_of and section.capacity_figures:
            made.append((f"{target}: capacity summary",
                         figures.capacity_summary(name, steps_of, cap, t0, results.paths.figure(f"capacity-{slug(target)}"),
                                                  nodes, title=target, events=summary.lb_events)))
        own = [r for r in records if of_label(r, target) and r.phase not in AT_CAPACITY_PHASES]
        at = capacity_step(None, t, own)
        up = next_step_up(None, cap, own)
        metrics = at.host_metrics if at else None
        found = profiles.cited(hints.hints_for(metrics, at.result) if at else [], recorded.get(target))
        first = [h for h in (hints.testbed_hint(t.testbed_bound), hints.tls_hint(t.tls_cpu_share),
                                hints.state_hint(t.degraded)) if h]
        found = [*first, *found]
        hint_blocks.append({"target": target, "step": at, "hints": [asdict(h) for h in found],
                            "monitored": metrics is not None, "next_up": up,
                            "nodes": {node: [f.get(x.name) for x in SHOWN] for node, f in serving_nodes(metrics).items()}})
        if at and at.result.latency_ms:
            spectra[f"{target} at {cap:g}/s"] = spectrum_of(at, run_dir)  # overhead runs: "node1 monitor on" etc.
        rows.append({"target": target, "capacity": cap, "repeats": t.repeats, "spread_pct": t.spread_pct,
                     "status": t.status, "degraded": (t.degraded or {}).get("sentence"),
                     "testbed_bound": t.testbed_bound, "held_short": t.held_short,
                     "client_leg": client_leg_words(t.client_leg_at_capacity) if t.client_leg_at_capacity else None,
                     "cut": not_measured.why_cut(raw, target),
                     "unsustained": (t.memory_unsustained or {}).get("sentence"),
                     "held_s": min((x["held_s"] for x in t.searches if x.get("held_s")), default=None),
                     "holds_failed": [h for x in t.searches for h in x.get("holds_failed") or []],
                     "p99": at.result.latency_ms.get("p99") if at else None, "step": at.step if at else None,
                     **calibrated(cap if grinding else None, name, machine, cpus)})
    made += section.figures(results)
    if spectra:
        made.append(("latency spectrum", figures.latency_spectrum(spectra, results.paths.figure("latency-spectrum"))))
    # The USL section for a kind that measures throughput by N (its section says how); none for the others.
    usl_info = usl_section(summary, section) if section.usl is not None else None
    by_step = {r.step: r for r in records}
    for point in usl_info["points"] if usl_info else []:  # what node1 did at each level, where it was monitored
        monitored = by_step.get(point.get("step"))
        point["node1"] = ((monitored.host_metrics if monitored else None) or {}).get("node1")
    if usl_info and usl_info["points"]:
        made.append(("USL", figures.usl_curve([p["n"] for p in usl_info["points"]],
                                             [p["throughput_rps"] for p in usl_info["points"]], usl_info["fit"],
                                             results.paths.figure("usl"), usl_info["what"])))
    loader = ChoiceLoader([DictLoader({"kind.html": section.template()}), FileSystemLoader(TEMPLATE_DIR)])
    # A figure left None by a run that broke off reads "not measured" (its reason is said where one is known).
    env = Environment(loader=loader, autoescape=select_autoescape(["html"]),
                      finalize=lambda value: "not measured" if value is None else value)
    html = env.get_template("template.html").render(
        workload=workload.describe(run.settings),
        run=run, summary=summary, rows=rows, hint_blocks=hint_blocks, usl=usl_info,
        calibration=machine, calibration_ms=calibration.node_ms(machine), caveat=efficiency.caveat, grinding=grinding,
        noise_pct=noise_band_pct(run, summary), **section.values(results),
        figures=[{"title": title, "src": _inline(path), "file": path.name} for title, path in made],
        profile=profile_rows(run), thresholds=thresholds(), shown=[f.heading for f in SHOWN],
        memory=[memory_capacity.sentence(node, m) for node, m in (summary.memory_capacity or {}).items()],
        profiles=profiles.blocks(results))
    out = results.paths.report
    tmp = out.with_suffix(".html.tmp")
    tmp.write_text(html)
    tmp.replace(out)
    return out


def calibrated(capacity: float | None, name: str, machine: dict | None, cpus: dict[str, float]) -> dict:
    """The capacity per calibrated core (capbench/analysis/calibration.py) and its share of the CPU quota behind it (a
    node's own; the cluster's, all the nodes'), where the run has a calibration."""
    cores = calibration.calibrated_cores(capacity, name, machine)
    quota = cpus.get(name) if name in cpus else (sum(cpus.values()) if name == "cluster" and cpus else None)
    return {"calibrated_cores": cores, "quota": quota,
            "quota_pct": 100 * cores / quota if cores is not None and quota else None}


def noise_band_pct(run: RunRecord, summary: Summary) -> float:
    """The band within which two capacities of this run cannot be told apart: the search's precision, or the
    widest repeat spread where searches were repeated."""
    spreads = [t.spread_pct or 0.0 for t in summary.targets.values()]
    return max([run.settings.get("precision_pct") or 0.0, *spreads])


def profile_rows(run: RunRecord) -> list[dict]:
    settings, actual, nodes = run.cluster_settings, run.nodes, nodes_of(run)
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
