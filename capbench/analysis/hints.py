"""Bottleneck hints for the step at a target's capacity, each with the figures behind it.

The rules read the step's host figures (capbench/metrics/export.py) and its load-host figures; every threshold is here,
named, so a reader can see why a hint fired or did not:
  CPU saturated   a node's java process uses ≥ CPU_SATURATED_PCT of the node's CPU quota;
  throttled       a node used its CPU quota up in ≥ THROTTLED_PCT of the quota's periods: its threads then wait
                  out the rest of each such period, whatever share of the quota the java process showed (the
                  JVM's own threads, JIT and GC, spend a small quota too);
  lock-bound      many threads busy (≥ LOCK_BUSY_THREADS) while the CPU stays ≤ LOCK_CPU_PCT of the quota:
                  requests wait for something other than the CPU (a lock, I/O);
  pool-bound      request threads waited for a database connection (≥ POOL_WAITING_THREADS on average) while
                  the node's pool had ≥ POOL_BUSY_PCT of its connections in use: the pool (DB_POOL_SIZE), not
                  the node's CPU, set the pace (seeds 003 and 004); it stands in for the lock rule's question;
  database-bound  the shared database's PostgreSQL used ≥ CPU_SATURATED_PCT of its host's CPU quota, or the quota
                  was used up in ≥ THROTTLED_PCT of its periods while ≥ DB_AT_WORK_CONNECTIONS backends were at
                  work on average: the database, not the nodes, set the pace, and more nodes only queue on it
                  (the USL's κ). An idle database host counts as throttled in about 30 % of the few periods in
                  which anything runs on it (its monitoring agents), which says nothing about the bench;
  lock waits      backends waited for a lock (≥ DB_LOCK_WAITS on average): contended writes serialise;
  GC-bound        ≥ GC_BOUND_PCT of the time in GC pauses;
  LB queueing     HAProxy queued requests for a server (its maxconn reached) or for the backend;
  TLS-bound       the full handshakes of new connections took ≥ TLS_BOUND_PCT of the CPU of the balancer or a
                  node that ended them, priced by the run's handshake probe (capbench/analysis/tls_share.py);
  memory-bound by state  the target degraded during its search (capbench/analysis/state_drift.py): a rate it carried
                  failed later while its sessions or live heap grew with the time spent in GC, not with the
                  rate; the search's own steps are the evidence, not the step at capacity;
  generator-bound the generator sent more than GENERATOR_LATE_PCT of the intended requests behind its own
                  schedule, or the load machine's CPU was nearly all busy: the step measured the generator as
                  well as the server. (Sends that waited for a busy connection are the server's doing: they are
                  in the corrected latency, not a generator problem.) The threshold is the verdict's
                  (capbench/rundata/records.py); the verdict goes further and calls the step invalid only when that lag
                  decided it (the p99 broke with the lag and held without it, capbench/engine/step.py), so this hint says
                  what the lag was and both p99s.
No hint is itself a finding: when none fires, the report says so, and shows what broke the SLO one step up."""
from __future__ import annotations

from dataclasses import dataclass, field

from capbench.hosts.topology import DATABASE
from capbench.rundata.records import GENERATOR_BEHIND_PCT, GENERATOR_CPU_PCT, StepResult
from capbench.rundata.summary import serving_nodes

CPU_SATURATED_PCT = 85.0
THROTTLED_PCT = 25.0
LOCK_BUSY_THREADS = 8.0
LOCK_CPU_PCT = 60.0
GC_BOUND_PCT = 10.0
POOL_WAITING_THREADS = 1.0
POOL_BUSY_PCT = 90.0
DB_LOCK_WAITS = 1.0
DB_AT_WORK_CONNECTIONS = 1.0
GENERATOR_LATE_PCT = GENERATOR_BEHIND_PCT
GENERATOR_MACHINE_CPU_PCT = GENERATOR_CPU_PCT


@dataclass(frozen=True)
class Hint:
    kind: str  # cpu | throttled | lock | pool | database | db-locks | gc | lb-queue | generator | state | testbed | tls
    host: str
    text: str
    figures: dict = field(default_factory=dict)


def testbed_hint(mark: dict | None) -> Hint | None:
    """A target's testbed-bound mark (capbench/analysis/testbed_ceiling.py) as the first of its hints, with the remedy."""
    if not mark:
        return None
    pacing = " (the balancer pacing)" if mark["figures"].get("paced_by") == "balancer" else ""
    return Hint("testbed", "lb, load", f"testbed-bound{pacing} — {mark['sentence']}; {mark['remedy']}",
                mark["figures"])


def tls_hint(share: dict | None) -> Hint | None:
    """A target whose handshakes took most of a TLS-ending host's CPU (capbench/analysis/tls_share.py)."""
    if not share or not share["tls_bound"]:
        return None
    return Hint("tls", ", ".join(share["tls_bound"]),
                f"TLS-bound — {share['sentence']}: connections that last longer (CONNECTION_LIFE), or TLS ended "
                "elsewhere (TLS), move this capacity more than the thread pool",
                {f"{host} {name}": value for host, figures in share["hosts"].items() for name, value in figures.items()
                 if name != "counted"})


def state_hint(degraded: dict | None) -> Hint | None:
    """The memory-bound-by-state rule, for a target whose summary says it degraded (TargetSummary.degraded)."""
    if not degraded or not str(degraded.get("cause", "")).startswith("memory-bound"):
        return None
    nodes = degraded.get("nodes") or {}
    return Hint("state", ", ".join(nodes) or "?", f"memory-bound by state — {degraded['sentence']}",
                {f"{node} {name}": " → ".join(f"{v:g}" if v is not None else "?" for v in values)
                 for node, changes in nodes.items() for name, values in changes.items()})


def hints_for(host_metrics: dict | None, result: StepResult | None = None) -> list[Hint]:
    """The hints for one step: host_metrics as in the step record, its result for the generator's figures."""
    found: list[Hint] = []
    metrics = host_metrics or {}
    for node, f in serving_nodes(metrics).items():
        cpu, busy, gc = f.get("cpu_pct_of_quota"), f.get("busy_threads_mean"), f.get("gc_time_pct")
        throttled = f.get("throttled_pct")
        basis = {"cpu_pct_of_quota": cpu, "cpu_quota": f.get("cpu_quota"), "throttled_pct": throttled,
                 "throttled_ms_per_s": f.get("throttled_ms_per_s"), "busy_threads_mean": busy,
                 "gc_time_pct": gc, "alloc_mb_per_s": f.get("alloc_mb_per_s"),
                 **({"app_requests_per_s": f["app_requests_per_s"]} if f.get("app_requests_per_s") is not None
                    else {"grind_requests_per_s": f.get("grind_requests_per_s")})}
        if cpu is not None and cpu >= CPU_SATURATED_PCT:
            found.append(Hint("cpu", node, f"{node}: CPU saturated — the java process used {cpu:g} % of the "
                                           f"node's {f.get('cpu_quota')} CPU quota", basis))
        if throttled is not None and throttled >= THROTTLED_PCT:
            found.append(Hint("throttled", node, f"{node}: CPU-throttled — its {f.get('cpu_quota')} CPU quota was used "
                                                 f"up in {throttled:g} % of the periods, {f.get('throttled_ms_per_s')} "
                                                 f"ms per second waited for the next one (the java process showed "
                                                 f"{cpu} % of the quota)", basis))
        pool = _pool_hint(node, f)
        if pool:
            found.append(pool)
        elif busy is not None and cpu is not None and busy >= LOCK_BUSY_THREADS and cpu <= LOCK_CPU_PCT:
            found.append(Hint("lock", node, f"{node}: lock-bound? {busy:g} threads busy on average while the CPU "
                                            f"stayed at {cpu:g} % of its quota: requests wait for something "
                                            "other than the CPU", basis))
        if gc is not None and gc >= GC_BOUND_PCT:
            found.append(Hint("gc", node, f"{node}: GC-bound — {gc:g} % of the time in GC, "
                                          f"{f.get('alloc_mb_per_s')} MB/s allocated", basis))
    found += _database_hints(metrics.get(DATABASE) or {})
    lb = metrics.get("lb") or {}
    for server, s in (lb.get("servers") or {}).items():
        if (s.get("queue_max") or 0) > 0:
            found.append(Hint("lb-queue", "lb", f"lb: HAProxy queued requests for {server} (up to "
                                                f"{s['queue_max']:g}, mean {s.get('queue_mean')}): the server's "
                                                "maxconn was reached", {"server": server, **s}))
    if (lb.get("backend_queue_max") or 0) > 0:
        found.append(Hint("lb-queue", "lb", f"lb: the backend queue held up to {lb['backend_queue_max']:g} requests",
                          {"backend_queue_max": lb["backend_queue_max"]}))
    # The load host whose machine was busiest (one of several where LOAD_HOSTS > 1).
    hosts = [g.host for g in result.generators] if result else []
    host, load = max(((h, metrics.get(h) or {}) for h in hosts or ["load"]),
                     key=lambda entry: entry[1].get("machine_cpu_busy_pct") or 0)
    late, intended = (result.behind_schedule, result.intended or 0) if result else (None, 0)
    late_pct = round(100 * late / intended, 2) if late is not None and intended else None
    machine = load.get("machine_cpu_busy_pct")
    if (late_pct is not None and late_pct > GENERATOR_LATE_PCT) or (machine is not None
                                                                    and machine >= GENERATOR_MACHINE_CPU_PCT):
        without = result.p99_without_generator_lag_ms if result else None
        lag_note = (f"; p99 {result.latency_ms.get('p99')} ms with that lag, {without} ms without"
                    if without is not None else "")
        found.append(Hint("generator", host, f"{host}: generator-bound? {late_pct} % of the requests went out behind "
                                             f"the generator's own schedule, the machine's CPU was {machine} % busy"
                                             f"{lag_note}",
                          {"behind_schedule_pct": late_pct, "machine_cpu_busy_pct": machine,
                           "generator_cpu_cores": load.get("generator_cpu_cores")}))
    return found


def _pool_hint(node: str, f: dict) -> Hint | None:
    waiting, active, size = f.get("db_pool_waiting_mean"), f.get("db_pool_active_mean"), f.get("db_pool_size")
    if waiting is None or active is None or not size or waiting < POOL_WAITING_THREADS \
            or 100 * active / size < POOL_BUSY_PCT:
        return None
    return Hint("pool", node, f"{node}: pool-bound — {waiting:g} request threads waited for a database connection "
                              f"on average while {active:g} of the pool's {size:g} were in use: the connection pool "
                              f"(DB_POOL_SIZE), not the CPU ({f.get('cpu_pct_of_quota')} % of its quota), set the "
                              "pace", {"db_pool_waiting_mean": waiting, "db_pool_active_mean": active,
                                       "db_pool_size": size, "cpu_pct_of_quota": f.get("cpu_pct_of_quota"),
                                       "busy_threads_mean": f.get("busy_threads_mean")})


def _database_hints(db: dict) -> list[Hint]:
    found = []
    cpu, throttled, locks = db.get("cpu_pct_of_quota"), db.get("throttled_pct"), db.get("lock_waits_mean")
    basis = {k: db.get(k) for k in ("cpu_pct_of_quota", "cpu_quota", "throttled_pct", "connections_active_mean",
                                    "lock_waits_mean", "transactions_per_s")}
    at_work = (db.get("connections_active_mean") or 0) >= DB_AT_WORK_CONNECTIONS
    if (cpu is not None and cpu >= CPU_SATURATED_PCT) or (at_work and throttled is not None and throttled >= THROTTLED_PCT):
        found.append(Hint("database", DATABASE, f"{DATABASE}: database-bound — PostgreSQL used {cpu} % of the database host's "
                                            f"{db.get('cpu_quota')} CPU quota (throttled in {throttled} % of its "
                                            f"periods), {db.get('connections_active_mean')} connections at work on "
                                            "average: the shared database, not the nodes, set the pace", basis))
    if locks is not None and locks >= DB_LOCK_WAITS:
        found.append(Hint("db-locks", DATABASE, f"{DATABASE}: {locks:g} backends waited for a lock on average (up to "
                                            f"{db.get('lock_waits_max')}): contended writes take turns", basis))
    return found
