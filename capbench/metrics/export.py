"""Per-step figures from a run's PCP archives: pmrep cuts each step's window out of each host's archive
(capbench/metrics/pmrep.py), the catalogue derives the figures (capbench/metrics/catalogue.py: a node's CPU % of its quota (or machine), heap,
allocation, GC, threads, requests; the balancer's per server; the load host's generator CPU and network), and
each step record gets them as `host_metrics`, with the request cross-check of capbench/metrics/counts.py."""
from __future__ import annotations

from pathlib import Path

from capbench.hosts import topology
from capbench.hosts.backend import ClusterError
from capbench.hosts.topology import role
from capbench.metrics import pmrep
from capbench.metrics.catalogue import db_figures, lb_figures, load_figures, node_figures
from capbench.metrics.counts import RawRows, cross_check
from capbench.metrics.series import read_csv, row_epochs


class ExportError(RuntimeError):
    """pmrep could not be run on the archives (no controller image, no Docker, no controller VM)."""


def figures_for_window(window_dir: Path, window: pmrep.Window, cpu_quotas: dict[str, float]) -> dict:
    figures: dict = {}
    for host in topology.ARCHIVED:
        path = window_dir / f"{host}.csv"
        if not path.is_file():
            continue
        series = read_csv(path)
        if role(host) == "node":
            figures[host] = node_figures(series, cpu_quotas.get(host))
        elif role(host) == "lb":
            figures[host] = lb_figures(series, topology.NODES)
        elif role(host) == "db":
            figures[host] = db_figures(series, cpu_quotas.get(host))
        else:
            figures[host] = load_figures(series)
    nodes = {h: f for h, f in figures.items() if role(h) == "node"}
    counts = {h: RawRows(row_epochs(path), read_csv(path)) for h in topology.MONITORED
              if (path := window_dir / f"{h}-counts.csv").is_file()}
    if "lb" in figures:
        figures["requests_cross_check"] = cross_check(nodes, figures["lb"], counts, window)
    return figures


# What the balancer counts of each node's requests (capbench/metrics/catalogue.py's SERVER): none of them where it
# passes TLS through and reads no request.
REQUEST_FIGURES = ("responses_per_s", "responses_5xx_per_s")


def unread_requests(figures: dict) -> dict:
    """A step's figures where the balancer passed the client's TLS through (TLS=node): its HTTP backend answered only
    checks and probes, so neither its per-node request counts nor the cross-check against Tomcat's stand."""
    servers = {node: {**own, **dict.fromkeys(REQUEST_FIGURES)}
               for node, own in figures.get("lb", {}).get("servers", {}).items()}
    return {**figures, "requests_cross_check": {},
            **({"lb": {**figures["lb"], "servers": servers}} if "lb" in figures else {})}


def export_run(pcp_dir: Path, export_dir: Path, records: list[dict], node_cpus: dict[str, float],
               balancer_reads_requests: bool = True) -> list[dict]:
    """The step records with `host_metrics` added (records outside the archives' time get none); node_cpus:
    the cores each node (and the database) may use (rundata.run.node_cpus, db_cpus), what its CPU share is
    counted against, unless a record gives a node's own (its node_cpus). `balancer_reads_requests`: False where
    the balancer passed TLS through (unread_requests)."""
    windows = pmrep.windows_for(records)
    try:
        pmrep.run(pcp_dir, export_dir, windows)
    except ClusterError as problem:
        raise ExportError(str(problem)) from problem
    by_label = {w.label: w for w in windows}
    enriched = []
    for record in records:
        label = f"step-{record['step']:03d}"
        window_dir = export_dir / label
        if label in by_label and window_dir.is_dir():
            quotas = {**node_cpus, **(record.get("node_cpus") or {})}  # a duet's twins: the quotas they had
            figures = figures_for_window(window_dir, by_label[label], quotas)
            record = {**record, "host_metrics": figures if balancer_reads_requests else unread_requests(figures),
                      "metrics_window": {"start_epoch": by_label[label].start, "end_epoch": by_label[label].end}}
        enriched.append(record)
    return enriched
