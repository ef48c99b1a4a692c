"""The per-step host figures, as data: each figure is a name, how it is derived from pmrep's rows of the step's
window (metrics/pmrep.conf exports them), its rounding, and where it is shown, a heading and unit. A step
record's `host_metrics` has every figure of this catalogue under its name, the summary's `metrics_at_capacity`
the same at each capacity, and the console's and the report's tables of figures at capacity show those named in
SHOWN. Adding a figure is one line here (and its metric in pmrep.conf, if new)."""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Callable

from capbench.hosts.haproxy import BACKEND
from capbench.metrics import series
from capbench.metrics.series import Series, labels, mean, peak, process_name, row_sums, scaled

MB = 1024 * 1024
OM = "openmetrics.jvm."
HA = "openmetrics.haproxy."
CPU_MS = ("hotproc.psinfo.utime", "hotproc.psinfo.stime")
PROC_MS = ("proc.psinfo.utime", "proc.psinfo.stime")
JAVA = re.compile(r"(^|/)java$")
PCP_AGENTS = re.compile(r"(^|/)(pmcd|pmdalinux|pmdaproc|python3)$")  # python3: the openmetrics agent
GENERATORS = re.compile(r"(^|/)(oha|wrk2?|capload)$")
POSTGRES = re.compile(r"(^|/)postgres:?$")  # the server and its backends ("postgres: capbench capbench … idle")
PG = "openmetrics.postgres."
YOUNG_POOLS = re.compile(r"Eden|ZHeap")  # where new objects are allocated: its allocation rate is the JVM's


@dataclass(frozen=True)
class Window:
    """One host's rows over a step's window, and what its figures need besides: a node's CPU quota, or the
    server (node) a balancer figure is about."""
    series: Series
    cpu_quota: float | None = None
    server: str | None = None

    def rows(self, metric: str | tuple[str, ...], keep=lambda instance: True) -> list[float | None]:
        return row_sums(self.series, metric if isinstance(metric, tuple) else (metric,), keep)


@dataclass(frozen=True)
class Figure:
    name: str
    derive: Callable[[Window], float | None]
    digits: int | None = None  # rounded to this many decimals; None: as derived
    heading: str = ""  # a column of the tables of figures at capacity, where set
    unit: str = ""

    def of(self, window: Window) -> float | None:
        value = self.derive(window)
        return value if value is None or self.digits is None else round(value, self.digits)


def _java(instance: str) -> bool:
    return bool(JAVA.search(process_name(instance)))


def _agents(instance: str) -> bool:
    return bool(PCP_AGENTS.search(process_name(instance)))


def _label(name: str, value: str):
    return lambda instance: labels(instance).get(name) == value


def _pct_of_quota(w: Window, cores: float | None) -> float | None:
    return 100 * cores / w.cpu_quota if cores is not None and w.cpu_quota else None


def _mean(metric, keep=lambda i: True, factor: float = 1.0):
    return lambda w: scaled(mean(w.rows(metric, keep)), factor)


def _peak(metric, keep=lambda i: True, factor: float = 1.0):
    return lambda w: scaled(peak(w.rows(metric, keep)), factor)


def _low(metric, keep=lambda i: True, factor: float = 1.0):
    return lambda w: scaled(min((v for v in w.rows(metric, keep) if v is not None), default=None), factor)


def _growth(values: list[float | None]) -> float | None:
    """How much a cumulative value grew from the window's first sample to its last."""
    present = [v for v in values if v is not None]
    return present[-1] - present[0] if len(present) >= 2 else None


def _throttled_pct(w: Window) -> float | None:
    """Of the CPU quota's periods in the window, the share in which the node used its quota up and every thread
    waited for the next period: with a small quota the JVM's own threads (JIT, GC) can spend it while requests
    wait. PCP gives both counts as instant values (the cgroup's totals so far), so pmrep does not turn them
    into rates: the window's share is the growth of one over the growth of the other."""
    periods, throttled = _growth(w.rows("cgroup.cpusched.periods")), _growth(w.rows("cgroup.cpusched.throttled"))
    return 100.0 * throttled / periods if periods and throttled is not None else None


def _cpu_ms_per_request(w: Window) -> float | None:
    """The JVM's CPU time per request it served: the speed of the machine under the node at that moment, as the
    work itself measures it. On our shared machines it moved 1.6 times within minutes (0.55 to 0.87 ms at v1
    level 13), and a node's capacity with it, while the share of its quota it used at capacity stayed put."""
    cpu_s = mean(w.rows(OM + "process_cpu_seconds_total"))
    requests = mean(w.rows(OM + "tomcat_requests_requestcount_total"))
    return 1000 * cpu_s / requests if cpu_s is not None and requests else None


def _application_requests_per_s(w: Window) -> float | None:
    """Requests per second the user's application served (every servlet of its web module, its health path's
    checks included); None where the nodes ran the Grinder alone."""
    metric = OM + "tomcat_servlet_requestcount_total"
    if not series.application_deployed(w.series, metric):
        return None
    return mean(w.rows(metric, series.serving_servlets(w.series, metric)))


def _grind_ms_per_request(w: Window) -> float | None:
    requests = mean(w.rows(OM + "tomcat_servlet_requestcount_total", _label("servlet", "grind")))
    busy_ms = mean(w.rows(OM + "tomcat_servlet_processingtime_total", _label("servlet", "grind")))
    return busy_ms / requests if requests and busy_ms is not None else None


NODE = (
    Figure("cpu_quota", lambda w: w.cpu_quota),
    Figure("cpu_pct_of_quota", lambda w: _pct_of_quota(w, scaled(mean(w.rows(CPU_MS, _java)), 1 / 1000)), 1,
           "CPU % quota", "%"),
    Figure("throttled_pct", _throttled_pct, 1, "throttled %", "%"),
    Figure("throttled_ms_per_s", _mean("cgroup.cpusched.throttled_time", factor=1e-6), 1),
    Figure("jvm_cpu_pct_of_quota", lambda w: _pct_of_quota(w, mean(w.rows(OM + "process_cpu_seconds_total"))), 1),
    Figure("cpu_ms_per_request", _cpu_ms_per_request, 3, "CPU ms/req", "ms"),
    Figure("monitoring_cpu_pct_of_quota", lambda w: _pct_of_quota(w, scaled(mean(w.rows(CPU_MS, _agents)), 1 / 1000)),
           1),
    Figure("java_rss_mb", _peak("hotproc.psinfo.rss", _java, 1 / 1024), 1),
    Figure("heap_used_mb_mean", _mean(OM + "jvm_memory_used_bytes", _label("area", "heap"), 1 / MB), 1, "heap MB",
           "MB"),
    Figure("heap_used_mb_max", _peak(OM + "jvm_memory_used_bytes", _label("area", "heap"), 1 / MB), 1),
    # The heap's lowest sample in the step: with young collections every second or more often (the Grinder's
    # garbage, a web application's), it is close to what survives them, the live heap that sessions and caches hold.
    Figure("heap_floor_mb", _low(OM + "jvm_memory_used_bytes", _label("area", "heap"), 1 / MB), 1),
    Figure("heap_committed_mb", _peak(OM + "jvm_memory_committed_bytes", _label("area", "heap"), 1 / MB), 1),
    Figure("alloc_mb_per_s", _mean(OM + "jvm_memory_pool_allocated_bytes_total",
                                   lambda i: bool(YOUNG_POOLS.search(labels(i).get("pool", ""))), 1 / MB), 1,
           "alloc MB/s", "MB/s"),
    Figure("gc_per_s", _mean(OM + "jvm_gc_collection_seconds_count"), 2),
    Figure("gc_time_pct", _mean(OM + "jvm_gc_collection_seconds_sum", factor=100), 2, "GC %", "%"),
    Figure("threads_live", _mean(OM + "jvm_threads_current"), 1),
    Figure("busy_threads_mean", _mean(OM + "tomcat_threadpool_currentthreadsbusy"), 2, "busy thr", "threads"),
    Figure("busy_threads_max", _peak(OM + "tomcat_threadpool_currentthreadsbusy")),
    Figure("pool_threads_mean", _mean(OM + "tomcat_threadpool_currentthreadcount"), 1),
    Figure("max_threads", _peak(OM + "tomcat_executor_maxthreads")),
    Figure("queued_max", _peak(OM + "tomcat_executor_queuesize")),
    Figure("connections_mean", _mean(OM + "tomcat_threadpool_connectioncount"), 1),
    Figure("requests_per_s", _mean(OM + "tomcat_requests_requestcount_total"), 2),
    Figure("errors_per_s", _mean(OM + "tomcat_requests_errorcount_total"), 2),
    Figure("grind_requests_per_s", _mean(OM + "tomcat_servlet_requestcount_total", _label("servlet", "grind")), 2),
    Figure("grind_ms_per_request", _grind_ms_per_request, 3),
    Figure("processing_ms_per_s", _mean(OM + "tomcat_requests_processingtime_total"), 1),
    Figure("query_requests_per_s", _mean(OM + "tomcat_servlet_requestcount_total", _label("servlet", "query")), 2),
    Figure("session_requests_per_s", _mean(OM + "tomcat_servlet_requestcount_total", _label("servlet", "session")),
           2),
    Figure("app_requests_per_s", _application_requests_per_s, 2),
    Figure("sessions_max", _peak(OM + "tomcat_sessions_active")),
    Figure("sessions_started_per_s", _mean(OM + "tomcat_sessions_started_total"), 2),
    Figure("db_pool_size", _peak(OM + "db_pool_totalconnections")),
    Figure("db_pool_active_mean", _mean(OM + "db_pool_activeconnections"), 2),
    Figure("db_pool_waiting_mean", _mean(OM + "db_pool_threadsawaitingconnection"), 2),
    Figure("db_pool_waiting_max", _peak(OM + "db_pool_threadsawaitingconnection")),
    Figure("db_cache_hits_per_s", _mean(OM + "db_cache_hits_total"), 2),
    Figure("db_cache_misses_per_s", _mean(OM + "db_cache_misses_total"), 2),
    Figure("db_cache_entries_max", _peak(OM + "db_cache_entries")),
)


def _server(metric: str, keep=lambda lab: True):
    """The node's rows in the HTTP backend (nodes); where TLS=node the TCP backend (nodes_passthrough) names the same
    servers, and its sessions are connections, not requests."""
    return lambda w: w.rows(HA + metric, lambda i: labels(i).get("server") == w.server
                            and labels(i).get("proxy", BACKEND) == BACKEND and keep(labels(i)))


def _server_mean(metric: str, keep=lambda lab: True):
    return lambda w: mean(_server(metric, keep)(w))


def _server_peak(metric: str):
    return lambda w: peak(_server(metric)(w))


# The balancer's figures for each node it serves (host_metrics["lb"]["servers"][node]).
SERVER = (
    Figure("responses_per_s", _server_mean("haproxy_server_http_responses_total"), 2),
    Figure("responses_5xx_per_s", _server_mean("haproxy_server_http_responses_total",
                                               lambda lab: lab.get("code") == "5xx"), 3),
    Figure("sessions_mean", _server_mean("haproxy_server_current_sessions"), 2),
    Figure("sessions_max", _server_peak("haproxy_server_current_sessions")),
    Figure("queue_mean", _server_mean("haproxy_server_current_queue"), 2),
    Figure("queue_max", _server_peak("haproxy_server_current_queue")),
    Figure("retries_per_s", _server_mean("haproxy_server_retry_warnings_total"), 3),
    Figure("redispatches_per_s", _server_mean("haproxy_server_redispatch_warnings_total"), 3),
    Figure("connection_errors_per_s", _server_mean("haproxy_server_connection_errors_total"), 3),
    Figure("response_errors_per_s", _server_mean("haproxy_server_response_errors_total"), 3),
)

LB = (
    Figure("backend_queue_max", _peak(HA + "haproxy_backend_current_queue")),
    Figure("haproxy_cpu_cores", _mean(CPU_MS, lambda i: process_name(i).endswith("haproxy"), 1 / 1000), 3),
    Figure("monitoring_cpu_cores", _mean(CPU_MS, _agents, 1 / 1000), 3),
)


def _interfaces(metric: str):
    return _mean(metric, lambda i: process_name(i) != "lo" and i != "lo", 1 / MB)


def _machine_busy_pct(w: Window) -> float | None:
    busy = w.rows(("kernel.all.cpu.user", "kernel.all.cpu.sys", "kernel.all.cpu.steal"))
    idle = w.rows("kernel.all.cpu.idle")
    return mean([100 * b / (b + i) if b is not None and i is not None and b + i > 0 else None
                 for b, i in zip(busy, idle)])


LOAD = (
    Figure("generator_cpu_cores", _mean(PROC_MS, lambda i: bool(GENERATORS.search(process_name(i))), 1 / 1000), 3),
    Figure("monitoring_cpu_cores", _mean(PROC_MS, _agents, 1 / 1000), 3),
    Figure("net_in_mb_per_s", _interfaces("network.interface.in.bytes"), 3),
    Figure("net_out_mb_per_s", _interfaces("network.interface.out.bytes"), 3),
    Figure("tcp_retransmits_per_s", _mean("network.tcp.retranssegs"), 2),
    Figure("machine_cpu_busy_pct", _machine_busy_pct, 1),
)



def _postgres(instance: str) -> bool:
    return bool(POSTGRES.search(process_name(instance)))


# The shared database host (host_metrics["db"]): PostgreSQL's CPU against the host's quota, its throttling, the
# nodes' connections at work, lock waits and what it did per second.
DB = (
    Figure("cpu_quota", lambda w: w.cpu_quota),
    Figure("cpu_cores", _mean(PROC_MS, _postgres, 1 / 1000), 3),
    Figure("cpu_pct_of_quota", lambda w: _pct_of_quota(w, scaled(mean(w.rows(PROC_MS, _postgres)), 1 / 1000)), 1),
    Figure("throttled_pct", _throttled_pct, 1),
    Figure("connections_active_mean", _mean(PG + "db_connections", _label("state", "active")), 2),
    Figure("connections_idle_mean", _mean(PG + "db_connections", _label("state", "idle")), 2),
    Figure("lock_waits_mean", _mean(PG + "db_lock_waits"), 2),
    Figure("lock_waits_max", _peak(PG + "db_lock_waits")),
    Figure("transactions_per_s", _mean(PG + "db_transactions_total"), 1),
    Figure("rows_fetched_per_s", _mean(PG + "db_rows_fetched_total"), 1),
    Figure("rows_updated_per_s", _mean(PG + "db_rows_updated_total"), 1),
    Figure("monitoring_cpu_cores", _mean(PROC_MS, _agents, 1 / 1000), 3),
)

# The node figures the tables of figures at capacity show (each has a heading), in this order.
SHOWN = tuple(next(f for f in NODE if f.name == name) for name in
              ("cpu_pct_of_quota", "cpu_ms_per_request", "throttled_pct", "gc_time_pct", "alloc_mb_per_s",
               "busy_threads_mean", "heap_used_mb_mean"))


def node_figures(series: Series, cpu_quota: float | None) -> dict:
    window = Window(series, cpu_quota)
    return {f.name: f.of(window) for f in NODE}


def lb_figures(series: Series, nodes: tuple[str, ...]) -> dict:
    servers = {}
    for node in nodes:
        window = Window(series, server=node)
        if not _server("haproxy_server_http_responses_total")(window):
            continue  # no row for this server: not in the archive
        servers[node] = {f.name: f.of(window) for f in SERVER}
    return {"servers": servers, **{f.name: f.of(Window(series)) for f in LB}}


def db_figures(series: Series, cpu_quota: float | None) -> dict:
    window = Window(series, cpu_quota)
    return {f.name: f.of(window) for f in DB}


def load_figures(series: Series) -> dict:
    window = Window(series)
    return {f.name: f.of(window) for f in LOAD}
