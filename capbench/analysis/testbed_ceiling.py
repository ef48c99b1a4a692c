"""The testbed's own ceiling, and the capacities it touches.

On one machine the load generator and the balancer share the cores with the nodes. What they cost is measured at
every step (PCP: HAProxy's and the generators' CPU), so the rate they can carry in the cores the nodes leave is known:

    ceiling = cores left / harness CPU per request,   cores left = the machine's CPUs − the nodes' CPU quotas

- the harness CPU per request is the median, over a run's passed and monitored steps in the upper half of its rates
  (where the fixed costs no longer weigh), of (HAProxy's + the generators' cores) / achieved rate; before a run has
  such steps, or where its rates stay far below the ceiling (ms_per_request), the direct check's: the same figure
  on requests HAProxy balances to itself, with the nodes idle (capbench/engine/ceiling_probe.py), which also says what the
  generator and HAProxy carried with the whole machine: no ceiling beside the nodes is higher;
- the cores left are those of each machine that runs the balancer or a load host (capbench/hosts/shared_cores.py): its CPUs
  less the quotas of the nodes on it, at the CPU a request of the harness's hosts on it; the ceiling is the lowest
  (on_machines). With BACKEND=compose, or on the swarm lab (its engines are containers here), every host shares
  this machine's CPUs. The nodes' quotas are counted whole (the ceiling is the one while they use them).

A target's capacity is **testbed-bound** (its status, with the reason and the remedy) when
- near the ceiling: it is at least (1 − CEILING_MARGIN_PCT %) of the ceiling beside the target's nodes (the
  generator and HAProxy then take that share of the cores the nodes leave, or more where the nodes do not use their
  quotas); or
- unsaturated on a busy machine: no rule of the application's side fired on any node that served (capbench/analysis/hints.py:
  CPU, throttled, lock, pool, GC, database, the balancer's queue for a node's maxconn) at the capacity's step, while
  the machine was at least MACHINE_BUSY_PCT % busy or the generator fell behind (the generator hint), and the
  generator and HAProxy took at least HARNESS_SHARE_PCT % of the cores the nodes leave (where those are known). The
  nodes had more to give; the testbed had not.
The failure above the capacity is not asked: on a full machine a node's CPU per request grows with the contention
(WireMock on 2026-12-01: node3 at 76 % of its quota at the cluster's capacity, 92 % one step up, where the machine
was 96 % busy), so its saturation there is the testbed's doing as much as the node's.
Then E and X_cluster / X_node1 are not the application's (capbench/kinds/cluster.py says why in their place), and the gate does
not judge the figure as the build's. Pure logic: the figures come from the step records."""
from __future__ import annotations

import statistics
from collections.abc import Callable
from dataclasses import dataclass

from capbench.analysis.hints import hints_for
from capbench.rundata.records import StepRecord
from capbench.rundata.summary import serving_nodes

CEILING_MARGIN_PCT = 25.0
MACHINE_BUSY_PCT = 70.0
HARNESS_SHARE_PCT = 50.0
LOW_RATE_SHARE = 0.25
# The hints of the application's side: any of them at the capacity says the nodes, not the testbed, set it.
APPLICATION_HINTS = ("cpu", "throttled", "lock", "pool", "database", "db-locks", "gc", "lb-queue", "state")
REMEDY = ("to measure the application past it, give the load and the balancer cores of their own: the load hosts "
          "or the balancer on other machines (BACKEND=swarm, docs/guides/swarm.md); or ask less of them: fewer nodes "
          "(NODES=2), or requests that each do more of the application's work")


def load_hosts_of(record: StepRecord) -> list[str]:
    return [g.host for g in record.result.generators] or ["load"]


def harness_parts(record: StepRecord, hosts: tuple[str, ...] | None = None) -> tuple[float | None, float | None]:
    """HAProxy's CPU and the generators' (summed) in the step, cores (PCP); None where one was not monitored.
    `hosts`: only those of the balancer ("lb") and the load hosts (one machine's share; 0.0 for one not on it);
    None: all."""
    metrics = record.host_metrics or {}
    lb = (metrics.get("lb") or {}).get("haproxy_cpu_cores") if hosts is None or "lb" in hosts else 0.0
    generators = [(metrics.get(host) or {}).get("generator_cpu_cores") for host in load_hosts_of(record)
                  if hosts is None or host in hosts]
    return lb, None if any(g is None for g in generators) else sum(generators)


def harness_cores(record: StepRecord, hosts: tuple[str, ...] | None = None) -> float | None:
    """HAProxy's and the generators' CPU in the step, cores (PCP); None where it was not monitored. `hosts`: only
    those of the balancer ("lb") and the load hosts (one machine's share); None: all."""
    lb, generators = harness_parts(record, hosts)
    return None if lb is None or generators is None else lb + generators


def ms_per_request(records: list[StepRecord], direct_rps: float | None = None,
                   hosts: tuple[str, ...] | None = None) -> tuple[float | None, int]:
    """The harness's CPU per request (ms) over the steps (the module's docstring), and how many steps gave it.
    None where the steps' highest rate is below LOW_RATE_SHARE of what the direct check carried (`direct_rps`): so
    far below the ceiling the generator's and HAProxy's fixed costs (opening connections, health checks) weigh on
    each request, and the direct check, measured near the ceiling, prices one better (the Grinder on 2026-12-01:
    0.26 ms a request at 200-480/s, 0.10 ms in the direct check at 8000/s)."""
    priced = [(r.result.achieved_rps, harness_cores(r, hosts)) for r in records
              if r.passed and r.valid and r.result.achieved_rps > 0]
    measured = [(rate, cores) for rate, cores in priced if cores is not None]
    if not measured:
        return None, 0
    top = max(rate for rate, _ in measured)
    if direct_rps and top < LOW_RATE_SHARE * direct_rps:
        return None, 0
    upper = [1000 * cores / rate for rate, cores in measured if rate >= top / 2]
    return round(statistics.median(upper), 4), len(upper)


def cores_left(machine_cpus: float | None, quotas: dict[str, float]) -> float | None:
    """What the quotas of the nodes on the machine leave of it; None where one has none (0: its whole machine)."""
    if not machine_cpus or any(q <= 0 for q in quotas.values()):
        return None
    return round(machine_cpus - sum(quotas.values()), 3)


def ceiling_rps(left: float | None, ms: float | None) -> float | None:
    if left is None or not ms:
        return None
    return round(max(left, 0.0) * 1000 / ms, 1)


@dataclass
class Ceiling:
    """What the machine can send and balance beside a set of nodes, and what the figure rests on."""
    machine_cpus: float | None
    quotas: dict[str, float]
    ms_per_request: float | None
    source: str  # "the run's steps" or "the direct check"
    # The most the direct check carried with the nodes idle (None: it carried every rate it tried): the generator
    # and HAProxy carry no more beside the nodes, whatever their CPU a request says.
    carried_rps: float | None = None
    machine: str = "this machine"  # which: where the hosts run on several (capbench/hosts/shared_cores.py)
    harness: tuple[str, ...] | None = None  # the balancer and load hosts on it (None: all of them)

    @property
    def cores_left(self) -> float | None:
        return cores_left(self.machine_cpus, self.quotas)

    @property
    def by_cpu_rps(self) -> float | None:
        return ceiling_rps(self.cores_left, self.ms_per_request)

    @property
    def rps(self) -> float | None:
        by_cpu = self.by_cpu_rps
        return min(by_cpu, self.carried_rps) if by_cpu is not None and self.carried_rps else by_cpu

    def beside(self, nodes: tuple[str, ...]) -> Ceiling:
        """The ceiling while only these nodes take their quotas (a node measured alone: the others idle)."""
        return Ceiling(self.machine_cpus, {n: q for n, q in self.quotas.items() if n in nodes}, self.ms_per_request,
                       self.source, self.carried_rps, self.machine, self.harness)

    def cores_needed(self, rate: float) -> float | None:
        return round(rate * self.ms_per_request / 1000, 2) if self.ms_per_request else None

    def sentence(self) -> str:
        if self.rps is None:
            return "the testbed's ceiling is not known" + (
                " (no step measured the generator's and HAProxy's CPU: MONITOR=on measures it)"
                if not self.ms_per_request else
                " (the hosts may run on several machines: no one machine's cores are counted)"
                if not self.machine_cpus else " (a node without a CPU quota may take the whole machine)")
        capped = (f"; no more than the direct check carried with the nodes idle, {self.carried_rps:g}/s"
                  if self.rps != self.by_cpu_rps else "")
        return (f"{self.machine} can send and balance about {self.rps:g}/s beside the nodes ({self.ms_per_request:g} ms "
                f"of generator and HAProxy CPU a request, from {self.source}; the quotas of the nodes on it "
                f"{sum(self.quotas.values()):g} leave {self.cores_left:g} of {self.machine_cpus:g} cores{capped})")

    def as_json(self) -> dict:
        return {"machine_cpus": self.machine_cpus, "node_quotas": self.quotas, "cores_left": self.cores_left,
                "harness_ms_per_request": self.ms_per_request, "source": self.source, "ceiling_rps": self.rps,
                "by_cpu_rps": self.by_cpu_rps, "direct_carried_rps": self.carried_rps, "machine": self.machine,
                "sentence": self.sentence()}


@dataclass
class HarnessMachines:
    """The ceiling of each machine that runs the balancer or a load host; beside a set of nodes, the lowest."""
    machines: list[Ceiling]

    def beside(self, nodes: tuple[str, ...]) -> Ceiling:
        ceilings = [m.beside(nodes) for m in self.machines]
        known = [c for c in ceilings if c.rps is not None]
        return min(known, key=lambda c: c.rps) if known else ceilings[0]

    def as_json(self) -> list[dict]:
        return [m.as_json() for m in self.machines]


def on_machines(machines: list[dict] | None, quotas: dict[str, float], harness: tuple[str, ...],
                price: Callable[[tuple[str, ...] | None], float | None], source: str,
                carried: float | None) -> HarnessMachines:
    """The ceilings where the balancer and the load hosts run: `machines` as capbench/hosts/shared_cores.py gives them
    (None: their cores cannot be counted), `quotas` every node's, `harness` the balancer's and the load hosts'
    names, `price(hosts)` the CPU a request (ms) of those hosts (None: of all)."""
    unknown = Ceiling(None, quotas, price(None), source, carried)
    if machines is None or not quotas:  # no node's quota known: the cores they leave are not either
        return HarnessMachines([unknown])
    ceilings = []
    for m in machines:
        here = tuple(h for h in m["hosts"] if h in harness)
        if here:
            ceilings.append(Ceiling(m["cpus"], {n: q for n, q in quotas.items() if n in m["hosts"]}, price(here),
                                    source, carried, m["name"], here))
    return HarnessMachines(ceilings or [unknown])


def _node_cpu(record: StepRecord) -> str:
    shares = [f["cpu_pct_of_quota"] for f in serving_nodes(record.host_metrics).values()
              if f.get("cpu_pct_of_quota") is not None]
    return f"{min(shares):g}–{max(shares):g} %" if shares else "unknown"


def judge(label: str, capacity: float | None, at: StepRecord | None, ceiling: Ceiling,
          state_bound: bool = False, alongside: dict[str, float] | None = None) -> dict | None:
    """The testbed-bound mark of a target's capacity, or None: `at` its step at the capacity (None: not measured
    there), `ceiling` beside the target's nodes (and those of the steps `alongside`: label → the rate they carried
    at the same instants, a duet's other slot); state_bound: the target degraded by its state (an application's
    limit)."""
    if not capacity or at is None or state_bound:
        return None
    fired = hints_for(at.host_metrics, at.result) if at.host_metrics else []
    application = sorted({h.kind for h in fired if h.kind in APPLICATION_HINTS})
    generator = next((h for h in fired if h.kind == "generator"), None)
    busy = max(((at.host_metrics or {}).get(host) or {}).get("machine_cpu_busy_pct") or 0.0
               for host in load_hosts_of(at))
    cores = harness_cores(at, ceiling.harness)
    lb_cores, generator_cores = harness_parts(at, ceiling.harness)
    # The balancer, more than the generator, sets the ceiling where HAProxy took the larger part of the harness's
    # cores (TLS ending there, many new connections): the part a user's own cluster has too, the generator not.
    paced_by = (None if cores is None or not cores else "balancer" if lb_cores > generator_cores else "generator")
    left = ceiling.cores_left
    share = 100 * cores / left if cores is not None and left else None
    figures = {"capacity_rps": capacity, "ceiling_rps": ceiling.rps, "harness_cores": cores,
               "harness_ms_per_request": ceiling.ms_per_request, "cores_left": left,
               "harness_share_of_cores_left_pct": round(share, 1) if share is not None else None,
               "machine_cpu_busy_pct": busy or None, "node_cpu_pct_of_quota": _node_cpu(at),
               "application_hints": application, "alongside_rps": alongside or {},
               "haproxy_cores": lb_cores, "generator_cores": generator_cores, "paced_by": paced_by}
    harness = (f"the generator and HAProxy took {cores:.2f} core" if cores is not None else
               "the generator and HAProxy were not monitored")
    carried = capacity + sum((alongside or {}).values())
    with_others = " ".join(f"with {other}'s {rate:g}/s at the same instants" for other, rate in (alongside or {}).items())
    if ceiling.rps and carried >= (1 - CEILING_MARGIN_PCT / 100) * ceiling.rps:
        rule = "ceiling"
        near = "above" if carried > ceiling.rps else f"within {CEILING_MARGIN_PCT:g} % of"
        why = (f"{with_others + ', ' if with_others else ''}{near} this machine's ceiling beside its "
               f"nodes, about {ceiling.rps:g}/s ({harness}; the nodes' quotas leave {left:g} core"
               + (f"; the machine was {busy:g} % busy" if busy else "") + ")")
    elif (at.host_metrics and not application and (busy >= MACHINE_BUSY_PCT or generator is not None)
          and (share is None or share >= HARNESS_SHARE_PCT)):
        rule = "unsaturated"
        why = (f"no node was saturated (CPU {_node_cpu(at)} of their quotas, no CPU, lock, pool, GC or state rule "
               f"fired) while the machine was {busy:g} % busy" + (" and the generator fell behind its schedule"
                                                                  if generator is not None else "")
               + f"; {harness}" + (f", {share:.0f} % of the {left:g} core the nodes' quotas leave"
                                    if share is not None else ""))
    else:
        return None
    if paced_by == "balancer":
        why += (f"; HAProxy took {lb_cores:.2f} core of it, the generator {generator_cores:.2f}: the balancer, more "
                "than the generator, sets this ceiling")
    return {"rule": rule, "sentence": f"{label}'s {capacity:g}/s is this machine's ceiling, not the application's: "
                                      f"{why}", "figures": figures, "remedy": REMEDY}


def efficiency_not_measured(sum_nodes: float | None, cluster: float | None, ceiling: Ceiling,
                            bound: dict[str, dict]) -> str:
    """Why E (and X_cluster / X_node1) is not the application's, where a figure it is made of is testbed-bound."""
    named = ", ".join(f"{label}'s {b['figures']['capacity_rps']:g}/s" for label, b in bound.items())
    text = f"not measured: {named} {'is' if len(bound) == 1 else 'are'} this machine's ceiling, not the application's"
    needed = ceiling.cores_needed(sum_nodes) if sum_nodes else None
    if needed is not None and ceiling.cores_left is not None:
        text += (f"; ΣX_i {sum_nodes:g}/s needs about {needed:g} cores of balancer and generator, "
                 f"{ceiling.cores_left:g} {'is' if ceiling.cores_left == 1 else 'are'} left")
    if cluster:
        text += f" (the figures would give E {cluster / sum_nodes:.3f})" if sum_nodes else ""
    return text
