"""Per-step figures from a run's PCP archives.

For each step window (the step record's start and end epochs, taken on the load host) pmrep, run in the
controller image (on the Vagrant backend: on the controller VM) over results/<run-id>/pcp/, writes one CSV
per host into pcp-export/step-NNN/<host>.csv (the same -S/-T/-t for every host, so rows line up; counters
come out as rates per second). From those rows this module derives what the report and the bottleneck hints
read, and adds it to each step record as `host_metrics`:
  node*  CPU of the java process as % of the node's CPU quota (and of PCP's agents), heap, allocation rate,
         GC rate and % of time in GC, busy/pool threads, requests/s from Tomcat's counters;
  lb     per server: responses/s (and 5xx), sessions, queue, retries, redispatches, errors;
  load   the generator's CPU, the host's network, the whole machine's CPU;
and per node a cross-check: the grind servlet's request count against HAProxy's response count for that
server over the step, each from its own host's samples as recorded (<host>-counts.csv, not interpolated):
from its last sample before the step started to its first sample after the step ended, when both counters
stand still, so both counts are exact whenever each host happened to be sampled.
"""
from __future__ import annotations

import csv
import io
import math
import os
import re
import statistics
import subprocess
import tarfile
import time
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

from load import loadhost
from load.loadhost import ClusterError

IMAGE = "capbench-controller:latest"
PMREP_CONF = "/opt/capbench/pcp/pmrep.conf"
ROLES = {"node1": "node", "node2": "node", "node3": "node", "lb": "lb", "load": "load"}
NODES = ("node1", "node2", "node3")
JAVA = re.compile(r"(^|/)java$")
PCP_AGENTS = re.compile(r"(^|/)(pmcd|pmdalinux|pmdaproc|python3)$")  # python3: the openmetrics agent
GENERATORS = re.compile(r"(^|/)(oha|wrk2?)$")
YOUNG_POOLS = re.compile(r"Eden|ZHeap")  # where new objects are allocated: its allocation rate is the JVM's
MB = 1024 * 1024
# The raw samples exported around each step for its counts: enough seconds on each side to hold the last
# sample before the step (and the one before it, for its rate) and the first after it (loggers sample each 1 s).
COUNT_MARGIN_S = 3
# Responses still in flight when the generator stops reach both counters within milliseconds: the count ends
# at the first sample this long after the step, if that sample comes before the next step starts.
SETTLE_S = 0.25
RAW_TIME_FORMAT = "%Y-%m-%d %H:%M:%S.%f"


class ExportError(RuntimeError):
    """pmrep could not be run on the archives (no controller image, no Docker)."""


@dataclass(frozen=True)
class Window:
    label: str
    start: int  # whole seconds inside the step: rates are for (start, end]
    end: int
    step_start: float  # the step's own epochs, for the request counts
    step_end: float
    next_start: float | None  # when the next recorded step started (None: the last one)

    @property
    def raw_from(self) -> int:
        """The span whose raw samples are exported for the counts."""
        return math.floor(self.step_start) - COUNT_MARGIN_S

    @property
    def raw_to(self) -> int:
        return math.ceil(self.step_end) + COUNT_MARGIN_S


def windows_for(records: list[dict]) -> list[Window]:
    """Records in the order they ran."""
    windows = []
    for record, following in zip(records, [*records[1:], None]):
        start, end = math.ceil(record["start_epoch"]), math.floor(record["end_epoch"])
        if end - start >= 2:
            windows.append(Window(f"step-{record['step']:03d}", start, end, record["start_epoch"],
                                  record["end_epoch"], following["start_epoch"] if following else None))
    return windows


def _utc(epoch: int) -> str:
    return time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(epoch))


def pmrep_script(windows: list[Window], hosts: list[str], pcp: str = "/pcp", out: str = "/out") -> str:
    """The shell script run where PCP's pmrep is (the controller image or VM): one pmrep per (window, host),
    reading the archives under `pcp` and writing CSV under `out`."""
    lines = ["set -u"]
    for window in windows:
        lines.append(f"mkdir -p {out}/{window.label}")
        for host in hosts:
            lines.append(_pmrep(pcp, out, host, window.start, window.end, f"{out}/{window.label}/{host}.csv",
                                ROLES[host]))
            if ROLES[host] in ("node", "lb"):
                lines.append(_pmrep(pcp, out, host, window.raw_from, window.raw_to,
                                    f"{out}/{window.label}/{host}-counts.csv", f"{ROLES[host]}-counts", raw=True))
    return "\n".join(lines) + "\n"


def _pmrep(pcp: str, out_dir: str, host: str, start: int, end: int, out: str, metric_set: str,
           raw: bool = False) -> str:
    # raw: every sample as the logger recorded it (-u, no interpolation), stamped to the microsecond.
    sampling = f"-u -f '{RAW_TIME_FORMAT}'" if raw else "-t 1s"
    return (f"pmrep -c {PMREP_CONF} -Z UTC -a {pcp}/{host} -S '@{_utc(start)}' "
            f"-T '@{_utc(end)}' {sampling} -o csv -F {out} :{metric_set} 2>>{out_dir}/pmrep.log"
            f" || echo '{out}: pmrep failed' >>{out_dir}/pmrep.log")


def run_pmrep(pcp_dir: Path, out_dir: Path, windows: list[Window]) -> list[str]:
    """Exports every window of every host archived in pcp_dir; returns the hosts exported."""
    hosts = [h for h in ROLES if (pcp_dir / h).is_dir()]
    if not hosts or not windows:
        return []
    out_dir.mkdir(parents=True, exist_ok=True)
    if loadhost.backend() == "vagrant":
        _pmrep_on_controller_vm(pcp_dir, out_dir, windows, hosts)
        return hosts
    argv = ["docker", "run", "--rm", "-i", "--network", "none", "--user", f"{os.getuid()}:{os.getgid()}",
            "-e", "HOME=/tmp", "-v", f"{pcp_dir.resolve()}:/pcp:ro", "-v", f"{out_dir.resolve()}:/out",
            "--entrypoint", "/usr/bin/tini", IMAGE, "--", "bash", "-s"]
    try:
        done = subprocess.run(argv, input=pmrep_script(windows, hosts).encode(), capture_output=True,
                              timeout=600)
    except (OSError, subprocess.TimeoutExpired) as problem:
        raise ExportError(f"pmrep could not run: {problem}") from problem
    if done.returncode != 0:
        raise ExportError(f"pmrep in {IMAGE} exited {done.returncode}: {done.stderr.decode()[-300:]}")
    return hosts


def _pmrep_on_controller_vm(pcp_dir: Path, out_dir: Path, windows: list[Window], hosts: list[str]) -> None:
    """On the Vagrant backend the user's machine may have no Docker: the controller VM, which has pmrep, gets
    the archives (a tar on stdin) and sends the CSVs back (a tar on stdout)."""
    archives = io.BytesIO()
    with tarfile.open(fileobj=archives, mode="w") as tar:
        for host in hosts:
            tar.add(pcp_dir / host, arcname=host)
    script = ('set -eu; work=$(mktemp -d); trap \'rm -rf "$work"\' EXIT; mkdir "$work/pcp" "$work/out"; '
              'tar -C "$work/pcp" -x; bash -s "$work" <<\'PMREP\' >&2\n'
              + pmrep_script(windows, hosts, pcp='"$1"/pcp', out='"$1"/out')
              + 'PMREP\ntar -C "$work/out" -c .')
    try:
        done = loadhost.host_exec("controller", ["bash", "-c", script], stdin=archives.getvalue(), timeout=600)
    except (ClusterError, subprocess.TimeoutExpired) as problem:
        raise ExportError(f"pmrep on the controller VM failed: {problem}") from problem
    with tarfile.open(fileobj=io.BytesIO(done.stdout)) as tar:
        tar.extractall(out_dir, filter="data")


# -- reading pmrep's CSV ----------------------------------------------------------------------------------
Series = dict[tuple[str, str], list[float | None]]


def read_csv(path: Path) -> Series:
    """{(metric, instance): values per row}; instance "" for a metric without instances; None where empty."""
    series: Series = {}
    with path.open(newline="") as f:
        rows = list(csv.reader(f))
    if not rows:
        return series
    header, body = rows[0], rows[1:]
    for col, name in enumerate(header[1:], start=1):
        metric, _, instance = name.partition("-")
        series[(metric, instance)] = [float(row[col]) if col < len(row) and row[col] != "" else None
                                      for row in body]
    return series


def row_epochs(path: Path) -> list[float]:
    """The Time column of a raw (-u) export, as epochs."""
    with path.open(newline="") as f:
        rows = list(csv.reader(f))[1:]
    return [datetime.strptime(row[0], RAW_TIME_FORMAT).replace(tzinfo=timezone.utc).timestamp() for row in rows]


def labels(instance: str) -> dict[str, str]:
    """'3 code:5xx proxy:nodes server:node1' → {'code': '5xx', 'proxy': 'nodes', 'server': 'node1'}."""
    text = instance.split(" ", 1)[1] if " " in instance else ""
    return dict(re.findall(r"(\w+):(.*?)(?= \w+:|$)", text))


def process_name(instance: str) -> str:
    """'000007 /usr/bin/java' → '/usr/bin/java'."""
    return instance.split(" ", 1)[1] if " " in instance else instance


def row_sums(series: Series, metric_names: tuple[str, ...], keep) -> list[float | None]:
    """Per row, the sum over the chosen metrics' instances (None where none had a value)."""
    columns = [values for (metric, instance), values in series.items() if metric in metric_names and keep(instance)]
    if not columns:
        return []
    sums = []
    for row in zip(*columns):
        present = [v for v in row if v is not None]
        sums.append(sum(present) if present else None)
    return sums


def mean(values: list[float | None]) -> float | None:
    present = [v for v in values if v is not None]
    return statistics.fmean(present) if present else None


def peak(values: list[float | None]) -> float | None:
    present = [v for v in values if v is not None]
    return max(present) if present else None


def _r(value: float | None, digits: int = 2) -> float | None:
    return None if value is None else round(value, digits)


def _scaled(value: float | None, factor: float) -> float | None:
    return None if value is None else value * factor


# -- figures per role -----------------------------------------------------------------------------------
CPU_MS = ("hotproc.psinfo.utime", "hotproc.psinfo.stime")
OM = "openmetrics.jvm."


def node_figures(series: Series, cpu_quota: float | None) -> dict:
    java_ms = row_sums(series, CPU_MS, lambda i: bool(JAVA.search(process_name(i))))
    agents_ms = row_sums(series, CPU_MS, lambda i: bool(PCP_AGENTS.search(process_name(i))))
    jvm_cpu_s = row_sums(series, (OM + "process_cpu_seconds_total",), lambda i: True)

    def pct_of_quota(cores: float | None) -> float | None:
        return _r(100 * cores / cpu_quota, 1) if cores is not None and cpu_quota else None

    java_cores = _scaled(mean(java_ms), 1 / 1000)
    heap = row_sums(series, (OM + "jvm_memory_used_bytes",), lambda i: labels(i).get("area") == "heap")
    committed = row_sums(series, (OM + "jvm_memory_committed_bytes",), lambda i: labels(i).get("area") == "heap")
    alloc = row_sums(series, (OM + "jvm_memory_pool_allocated_bytes_total",),
                     lambda i: bool(YOUNG_POOLS.search(labels(i).get("pool", ""))))
    gc_count = row_sums(series, (OM + "jvm_gc_collection_seconds_count",), lambda i: True)
    gc_time = row_sums(series, (OM + "jvm_gc_collection_seconds_sum",), lambda i: True)
    busy = row_sums(series, (OM + "tomcat_threadpool_currentthreadsbusy",), lambda i: True)
    pool = row_sums(series, (OM + "tomcat_threadpool_currentthreadcount",), lambda i: True)
    requests = row_sums(series, (OM + "tomcat_requests_requestcount_total",), lambda i: True)
    processing_ms = row_sums(series, (OM + "tomcat_requests_processingtime_total",), lambda i: True)

    def servlet(metric: str, name: str) -> list[float | None]:
        return row_sums(series, (OM + metric,), lambda i: labels(i).get("servlet") == name)

    grind = servlet("tomcat_servlet_requestcount_total", "grind")
    grind_ms = servlet("tomcat_servlet_processingtime_total", "grind")
    grind_rps, grind_ms_per_s = mean(grind), mean(grind_ms)
    return {
        "cpu_quota": cpu_quota,
        "cpu_pct_of_quota": pct_of_quota(java_cores),
        "jvm_cpu_pct_of_quota": pct_of_quota(mean(jvm_cpu_s)),
        "monitoring_cpu_pct_of_quota": pct_of_quota(_scaled(mean(agents_ms), 1 / 1000)),
        "java_rss_mb": _r(_scaled(peak(row_sums(series, ("hotproc.psinfo.rss",),
                                                lambda i: bool(JAVA.search(process_name(i))))), 1 / 1024), 1),
        "heap_used_mb_mean": _r(_scaled(mean(heap), 1 / MB), 1),
        "heap_used_mb_max": _r(_scaled(peak(heap), 1 / MB), 1),
        "heap_committed_mb": _r(_scaled(peak(committed), 1 / MB), 1),
        "alloc_mb_per_s": _r(_scaled(mean(alloc), 1 / MB), 1),
        "gc_per_s": _r(mean(gc_count), 2),
        "gc_time_pct": _r(_scaled(mean(gc_time), 100), 2),
        "threads_live": _r(mean(row_sums(series, (OM + "jvm_threads_current",), lambda i: True)), 1),
        "busy_threads_mean": _r(mean(busy), 2),
        "busy_threads_max": peak(busy),
        "pool_threads_mean": _r(mean(pool), 1),
        "max_threads": peak(row_sums(series, (OM + "tomcat_executor_maxthreads",), lambda i: True)),
        "queued_max": peak(row_sums(series, (OM + "tomcat_executor_queuesize",), lambda i: True)),
        "connections_mean": _r(mean(row_sums(series, (OM + "tomcat_threadpool_connectioncount",), lambda i: True)), 1),
        "requests_per_s": _r(mean(requests), 2),
        "errors_per_s": _r(mean(row_sums(series, (OM + "tomcat_requests_errorcount_total",), lambda i: True)), 2),
        "grind_requests_per_s": _r(grind_rps, 2),
        "grind_ms_per_request": _r(grind_ms_per_s / grind_rps, 3) if grind_rps and grind_ms_per_s is not None
        else None,
        "processing_ms_per_s": _r(mean(processing_ms), 1),
    }


HA = "openmetrics.haproxy."


def lb_figures(series: Series) -> dict:
    def per_server(metric: str, server: str, keep=lambda lab: True) -> list[float | None]:
        return row_sums(series, (HA + metric,),
                        lambda i: labels(i).get("server") == server and keep(labels(i)))

    servers = {}
    for server in NODES:
        responses = per_server("haproxy_server_http_responses_total", server)
        if not responses:
            continue
        sessions = per_server("haproxy_server_current_sessions", server)
        queue = per_server("haproxy_server_current_queue", server)
        servers[server] = {
            "responses_per_s": _r(mean(responses), 2),
            "responses_5xx_per_s": _r(mean(per_server("haproxy_server_http_responses_total", server,
                                                      lambda lab: lab.get("code") == "5xx")), 3),
            "sessions_mean": _r(mean(sessions), 2), "sessions_max": peak(sessions),
            "queue_mean": _r(mean(queue), 2), "queue_max": peak(queue),
            "retries_per_s": _r(mean(per_server("haproxy_server_retry_warnings_total", server)), 3),
            "redispatches_per_s": _r(mean(per_server("haproxy_server_redispatch_warnings_total", server)), 3),
            "connection_errors_per_s": _r(mean(per_server("haproxy_server_connection_errors_total", server)), 3),
            "response_errors_per_s": _r(mean(per_server("haproxy_server_response_errors_total", server)), 3),
        }
    haproxy_ms = row_sums(series, CPU_MS, lambda i: process_name(i).endswith("haproxy"))
    agents_ms = row_sums(series, CPU_MS, lambda i: bool(PCP_AGENTS.search(process_name(i))))
    return {"servers": servers,
            "backend_queue_max": peak(row_sums(series, (HA + "haproxy_backend_current_queue",), lambda i: True)),
            "haproxy_cpu_cores": _r(_scaled(mean(haproxy_ms), 1 / 1000), 3),
            "monitoring_cpu_cores": _r(_scaled(mean(agents_ms), 1 / 1000), 3)}


def load_figures(series: Series) -> dict:
    proc_ms = ("proc.psinfo.utime", "proc.psinfo.stime")
    generator_ms = row_sums(series, proc_ms, lambda i: bool(GENERATORS.search(process_name(i))))
    agents_ms = row_sums(series, proc_ms, lambda i: bool(PCP_AGENTS.search(process_name(i))))

    def interfaces(metric: str) -> list[float | None]:
        return row_sums(series, (metric,), lambda i: process_name(i) != "lo" and i != "lo")

    busy = row_sums(series, ("kernel.all.cpu.user", "kernel.all.cpu.sys", "kernel.all.cpu.steal"), lambda i: True)
    idle = row_sums(series, ("kernel.all.cpu.idle",), lambda i: True)
    machine_busy = [100 * b / (b + i) if b is not None and i is not None and b + i > 0 else None
                    for b, i in zip(busy, idle)]
    return {
        "generator_cpu_cores": _r(_scaled(mean(generator_ms), 1 / 1000), 3),
        "monitoring_cpu_cores": _r(_scaled(mean(agents_ms), 1 / 1000), 3),
        "net_in_mb_per_s": _r(_scaled(mean(interfaces("network.interface.in.bytes")), 1 / MB), 3),
        "net_out_mb_per_s": _r(_scaled(mean(interfaces("network.interface.out.bytes")), 1 / MB), 3),
        "tcp_retransmits_per_s": _r(mean(row_sums(series, ("network.tcp.retranssegs",), lambda i: True)), 2),
        "machine_cpu_busy_pct": _r(mean(machine_busy), 1),
    }


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


def cross_check(nodes: dict[str, dict], lb: dict, counts: dict[str, RawRows], window: Window) -> dict:
    """Each node's grind-servlet request count against HAProxy's response count for that server over the
    step (checks and /health requests are in neither count); with both rates."""
    checks = {}
    for node, figures in nodes.items():
        if node not in counts or "lb" not in counts:
            continue
        tomcat = count_over(counts[node], OM + "tomcat_servlet_requestcount_total",
                            lambda i: labels(i).get("servlet") == "grind", window)
        haproxy = count_over(counts["lb"], HA + "haproxy_server_http_responses_total",
                             lambda i: labels(i).get("server") == node, window)
        if tomcat is None or haproxy is None:
            continue
        checks[node] = {"tomcat_requests": tomcat, "haproxy_responses": haproxy,
                        "diff_pct": _r(100 * (tomcat - haproxy) / haproxy, 2) if haproxy >= 100 else None,
                        "tomcat_rps": figures.get("grind_requests_per_s"),
                        "haproxy_rps": lb.get("servers", {}).get(node, {}).get("responses_per_s")}
    return checks


def figures_for_window(window_dir: Path, window: Window, cpu_quotas: dict[str, float]) -> dict:
    figures: dict = {}
    for host, role in ROLES.items():
        path = window_dir / f"{host}.csv"
        if not path.is_file():
            continue
        series = read_csv(path)
        if role == "node":
            figures[host] = node_figures(series, cpu_quotas.get(host))
        elif role == "lb":
            figures[host] = lb_figures(series)
        else:
            figures[host] = load_figures(series)
    nodes = {h: f for h, f in figures.items() if ROLES[h] == "node"}
    counts = {h: RawRows(row_epochs(path), read_csv(path)) for h in ROLES
              if (path := window_dir / f"{h}-counts.csv").is_file()}
    if "lb" in figures:
        figures["requests_cross_check"] = cross_check(nodes, figures["lb"], counts, window)
    return figures


def cpu_quotas(cluster_settings: dict[str, str]) -> dict[str, float]:
    quotas = {}
    for n, node in enumerate(NODES, start=1):
        try:
            quotas[node] = float(cluster_settings[f"NODE{n}_CPUS"])
        except (KeyError, ValueError):
            pass
    return quotas


def export_run(pcp_dir: Path, export_dir: Path, records: list[dict], cluster_settings: dict[str, str]
               ) -> list[dict]:
    """The step records with `host_metrics` added (records outside the archives' time get none)."""
    windows = windows_for(records)
    run_pmrep(pcp_dir, export_dir, windows)
    quotas = cpu_quotas(cluster_settings)
    by_label = {w.label: w for w in windows}
    enriched = []
    for record in records:
        label = f"step-{record['step']:03d}"
        window_dir = export_dir / label
        if label in by_label and window_dir.is_dir():
            record = {**record, "host_metrics": figures_for_window(window_dir, by_label[label], quotas),
                      "metrics_window": {"start_epoch": by_label[label].start, "end_epoch": by_label[label].end}}
        enriched.append(record)
    return enriched
