"""The end of a run on the console, for every kind: the capacities' table, the nodes' figures at each capacity
(the catalogue's shown figures, capbench/metrics/catalogue.py) beside the request cross-check, then the history line
and report.html."""
from __future__ import annotations

from capbench.analysis import not_measured
from capbench.engine.progress import mmss, say
from capbench.metrics.catalogue import SHOWN
from capbench.report.client_leg_words import client_leg_words
from capbench.rundata import jsonl
from capbench.rundata.layout import RunPaths, history_path
from capbench.rundata.run import RunRecord
from capbench.rundata.summary import Summary, serving_nodes

CROSS_CHECK = (("tomcat_requests", "Tomcat n"), ("haproxy_responses", "HAProxy n"), ("diff_pct", "diff %"))


def figure(value, unit: str = "") -> str:
    """A figure for a table: one decimal for rates (unit given), three for ratios, n/a when unknown."""
    if not isinstance(value, float):
        return "n/a"
    return f"{value:.1f}{unit}" if unit else f"{value:.3f}"


SMOKE = ("SMOKE RUN (QUICK=1, holds under 60 s): these figures show the testbed works; they are not capacities "
         "a client holds for a minute (QUICK_HOLD_S=60, or a run without QUICK, measures those)")


def print_capacities(summary: dict) -> None:
    rows = list(summary["targets"].items())
    width = max([10] + [len(name) + 2 for name, _ in rows])  # bench-overhead's labels are longer
    if summary.get("smoke"):
        print(f"\n{SMOKE}")
    print(f"\n{'target':<{width}}{'capacity/s':>12}{'repeats':>10}{'min..max/s':>22}{'interval/s':>22}  "
          f"driver {summary['driver']['name']}")
    for name, t in rows:
        cap = f"{t['capacity_rps']:.1f}" if t["capacity_rps"] else "none"
        span = f"{t['min_rps']:.1f}..{t['max_rps']:.1f}" if t["min_rps"] else "-"
        seen = f"{t['interval_rps'][0]:.1f}..{t['interval_rps'][1]:.1f}" if t.get("interval_rps") else "-"
        print(f"{name:<{width}}{cap:>12}{len(t['repeats']):>10}{span:>22}{seen:>22}")
        if not t["capacity_rps"]:
            print(f"{'':<{width}}  {not_measured.why_no_capacity(summary, name)}")
        for low, high in t.get("unresolved") or []:
            print(f"{'':<{width}}  a search ran out of steps between {low:g} and {high:g}/s (not in the capacity)")
        if t.get("degraded"):
            print(f"{'':<{width}}  DEGRADED: {t['degraded']['sentence']}")
        if t.get("testbed_bound"):
            print(f"{'':<{width}}  TESTBED-BOUND: {t['testbed_bound']['sentence']}")
        if t.get("held_short"):
            print(f"{'':<{width}}  HELD SHORT: {t['held_short']}: a figure, not a capacity held")
        held = [s.get("held_s") for s in t.get("searches") or [] if s.get("held_s")]
        failed = [f"{h['rate']:g}/s after {h['held_s']:g} s" for s in t.get("searches") or []
                  for h in s.get("holds_failed") or []]
        said = ([f"held {min(held):g} s"] if held and not t.get("held_short") else []) + (
            [f"did not hold: {', '.join(failed)}"] if failed else [])
        if said:
            print(f"{'':<{width}}  " + "; ".join(said))
        if t.get("client_leg_at_capacity"):
            print(f"{'':<{width}}  client leg at capacity: {client_leg_words(t['client_leg_at_capacity'])}")
        if share := t.get("tls_cpu_share"):
            print(f"{'':<{width}}  {'TLS-BOUND: ' if share['tls_bound'] else 'handshakes at capacity: '}{share['sentence']}")
    for name in summary.get("skipped") or {}:
        if name not in summary["targets"]:
            print(f"{name:<{width}}{'none':>12}  {not_measured.why_no_capacity(summary, name)}")
    ceiling = summary.get("testbed_ceiling")
    if ceiling:
        print(f"testbed ceiling: {ceiling['sentence']}")
        if any(t.get("testbed_bound") for _, t in rows):
            print(f"  testbed-bound figures: {next(t for _, t in rows if t.get('testbed_bound'))['testbed_bound']['remedy']}")


def print_host_figures(summary: dict) -> None:
    """At each target's capacity: what the nodes did (from PCP), and the step's requests counted by Tomcat's
    grind servlet against the responses HAProxy counted for that node."""
    rows = [(name, t["metrics_at_capacity"]) for name, t in summary["targets"].items()
            if t.get("metrics_at_capacity")]
    if not rows:
        return
    columns = [(heading, max(len(heading) + 2, 7)) for heading in [f.heading for f in SHOWN]
               + [h for _, h in CROSS_CHECK]]
    label_width = max([19, *(len(name) + 1 for name, _ in rows)])  # a scenario file's name may be long
    print(f"\n{'at capacity (PCP)':<{label_width}}{'node':<6}" + "".join(f"{heading:>{width}}" for heading, width in columns))
    for name, figures in rows:
        for node, f in serving_nodes(figures).items():
            check = figures.get("requests_cross_check", {}).get(node, {})
            cells = [f.get(x.name) for x in SHOWN] + [check.get(key) for key, _ in CROSS_CHECK]
            print(f"{name:<{label_width}}{node:<6}" + "".join(f"{'-' if v is None else v:>{w}}"
                                                   for v, (_, w) in zip(cells, columns)))


def print_load_hosts(summary: dict) -> None:
    """With several load hosts: each one's share at each capacity, its CPU, and how evenly they sent."""
    shares = summary.get("load_hosts")
    if not shares:
        return
    off, skew = shares["max_share_off_pct"], shares["max_start_skew_ms"]
    print(f"\nload hosts {', '.join(shares['hosts'])}: one rate split evenly, histograms merged; over "
          f"{shares['passed_steps']} passed steps a share of the achieved strayed at most "
          f"{'n/a' if off is None else f'{off:.2f} %'} from even; latest start "
          f"{'n/a' if skew is None else f'{skew:.1f} ms'} after the agreed instant")
    for label, at in shares["at_capacity"].items():
        cells = [f"{g['host']} {g['achieved_rps']:.1f}/s ({g['share_pct']:.2f} %, CPU {g['cpu_pct']} % of "
                 f"{g['cpus']:g})" for g in at["rows"]]
        print(f"  {label} at {at['rate']:g}/s: " + ", ".join(cells))


def finish(kind, paths: RunPaths, summary: dict) -> None:
    """The kind's tables, the nodes' figures, one line in results/history.jsonl and report.html; a failure of
    the report loses nothing already written."""
    if kind.needs.reports:
        found = kind.found_in(summary)
        kind.shows.console(summary, found)
        print_host_figures(summary)
        print_load_hosts(summary)
        try:
            from capbench.analysis import history
            from capbench.report import build  # matplotlib and jinja only when a report is made
            typed = Summary.from_json(summary)
            jsonl.append(history_path(), history.history_line(RunRecord.read(paths.run_json), typed,
                                                         kind.shows.history(found)).to_json())
            say(f"report: {build.build(paths.root, kind.shows.section)}")
        except Exception as problem:  # noqa: BLE001 — the run's results are on disk; say what failed, keep going
            say(f"warning: the report could not be made ({type(problem).__name__}: {problem}); "
                f"retry with make report RUN={paths.root.name}")
    for event in summary.get("events") or []:
        say(f"{summary['status']}: {event['sentence']}")
    say(f"{summary['status']}: {len(jsonl.read(paths.steps))} steps in {mmss(summary['elapsed_s'])} → {paths.root}")


def print_usl_fit(fit: dict, label: str = "USL") -> None:
    """A USL fit as summary.json keeps it (capbench/analysis/usl_fit.py), or why there is none, with its caveats."""
    if "error" in fit:
        print(f"{label}: {'fit failed' if fit.get('failed') else 'no fit'}: {fit['error']}")
    elif fit:
        from capbench.analysis.usl_fit import UslFit  # numpy only when there is a fit to print
        shown = UslFit.from_dict(fit)
        print(f"{label}: σ = {shown.shown('sigma', 4)}  κ = {shown.shown('kappa', 6)}  λ = {shown.shown('lam', 1)}/s  "
              f"N* = {shown.peak_shown()}  R² = {fit['r_squared']:.4f}")
        for caveat in shown.caveats():
            print(f"{label}: note: {caveat}")
