"""Exact request counts over a step, and the cross-check they make possible: per node, the workload servlet's
request count (Tomcat) against the balancer's response count for that server (HAProxy), each from its own
host's samples as recorded (<host>-counts.csv, not interpolated): from its last sample before the step
started to its first sample after the step ended, when both counters stand still, so both counts are exact
whenever each host happened to be sampled."""
from __future__ import annotations

from dataclasses import dataclass

from capbench.metrics.catalogue import HA, OM
from capbench.metrics.pmrep import Window
from capbench.metrics.series import Series, labels, row_sums, serving_servlets
from capbench.rundata.workload import SERVLETS as WORKLOAD_SERVLETS

# Responses still in flight when the generator stops reach both counters within milliseconds: the count ends
# at the first sample this long after the step, if that sample comes before the next step starts.
SETTLE_S = 0.25


@dataclass(frozen=True)
class RawRows:
    """A raw (-u) export: each row's epoch, and per row the rate since the row before (None on the first)."""
    epochs: list[float]
    series: Series


def count_over(rows: RawRows, metric: str, keep, window: Window) -> float | None:
    """How much a counter (summed over the kept instances) grew from the host's last sample at or before the
    step's start to its first sample SETTLE_S after the step's end (or, if that one came after the next step
    had started, its first sample after the end): each row's rate times the time since the row before."""
    rates, epochs = row_sums(rows.series, (metric,), keep), rows.epochs
    before = [i for i, t in enumerate(epochs) if t <= window.step_start]
    settled = [i for i, t in enumerate(epochs) if t >= window.step_end + SETTLE_S
               and (window.next_start is None or t < window.next_start)]
    after = settled or [i for i, t in enumerate(epochs) if t >= window.step_end]
    if not rates or not before or not after:
        return None
    first, last = before[-1], after[0]
    grown = [rates[i] * (epochs[i] - epochs[i - 1]) if rates[i] is not None else None
             for i in range(first + 1, last + 1)]
    return None if None in grown else round(sum(grown), 1)




def _sum(*rates: float | None) -> float | None:
    known = [r for r in rates if r is not None]
    return round(sum(known), 2) if known else None


def cross_check(nodes: dict[str, dict], lb: dict, counts: dict[str, RawRows], window: Window) -> dict:
    """Each node's request count of the servlets that served the bench (the Grinder's /grind, /query or /session,
    or every servlet of a user's application) against HAProxy's response count for that server over the step
    (HAProxy's checks are in neither, except those of an application's own health path); with both rates."""
    checks = {}
    for node, figures in nodes.items():
        if node not in counts or "lb" not in counts:
            continue
        servlets = OM + "tomcat_servlet_requestcount_total"
        tomcat = count_over(counts[node], servlets, serving_servlets(counts[node].series, servlets), window)
        haproxy = count_over(counts["lb"], HA + "haproxy_server_http_responses_total",
                             lambda i: labels(i).get("server") == node, window)
        if tomcat is None or haproxy is None:
            continue
        checks[node] = {"tomcat_requests": tomcat, "haproxy_responses": haproxy,
                        "diff_pct": round(100 * (tomcat - haproxy) / haproxy, 2) if haproxy >= 100 else None,
                        "tomcat_rps": figures.get("app_requests_per_s")
                        or _sum(*(figures.get(f"{servlet}_requests_per_s") for servlet in WORKLOAD_SERVLETS)),
                        "haproxy_rps": lb.get("servers", {}).get(node, {}).get("responses_per_s")}
    return checks
