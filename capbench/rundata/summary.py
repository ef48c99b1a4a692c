"""summary.json, typed (Summary, TargetSummary), and the rules that read it, written once: which steps belong
to a search, the capacities its repeats found, and the host figures at a capacity."""
from __future__ import annotations

import statistics
from dataclasses import asdict, dataclass, fields
from typing import Any, TypeVar

from capbench.rundata import workload
from capbench.rundata.findings import Findings
from capbench.rundata.records import AT_CAPACITY_PHASES, StepRecord, doc, known

SUMMARY_SCHEMA = "capbench-summary/1"
# Written even when empty (None): the rest of the optional fields only where the run has them.
ALWAYS_WRITTEN = ("error", "calibration")
F = TypeVar("F", bound=Findings)


@dataclass
class TargetSummary:
    """A search label's entry in summary.json's targets."""
    capacity_rps: float | None = doc("the median of the capacities its repeats found; None: none found one",
                                     default=None)
    repeats: list[float] = doc("each repeat's capacity, of those that found one", default_factory=list)
    interval_rps: list[float] | None = doc("[low, high]: where the capacity may lie by every step the searches "
                                           "saw, at least their brackets", default=None)
    unresolved: list[list[float]] = doc("the brackets of searches that ran out of steps wider than the "
                                        "precision (not in the capacity)", default_factory=list)
    min_rps: float | None = doc("the lowest of the repeats' capacities", default=None)
    max_rps: float | None = doc("the highest of the repeats' capacities", default=None)
    spread_pct: float | None = doc("(max - min) / median in %, with two repeats or more", default=None)
    searches: list[dict] = doc("each repeat's outcome (capbench/search/capacity.py): status, capacity_rps, interval_rps, "
                               "lowest_failure_rps, tried, warnings", default_factory=list)
    metrics_at_capacity: dict | None = doc("the host figures at the capacity (metrics_at), with the step they "
                                           "come from; None: not monitored", default=None)
    client_leg_at_capacity: dict | None = doc("the client's leg as the balancer counted it at the capacity "
                                              "(client_leg_at: a step record's client_leg, with its step); None: "
                                              "clear-text HTTP/1.1, or no step at the capacity", default=None)
    tls_cpu_share: dict | None = doc("where the run priced a TLS handshake (run.json's tls.handshake_cost): per "
                                     "host that ended TLS at the capacity its full handshakes/s, their CPU ms each, "
                                     "the cores its process used and the handshakes' share of them; tls_bound: the "
                                     "hosts where that share is most of it (capbench/analysis/tls_share.py)",
                                     default=None)
    status: str = doc("found: a capacity (held, with HOLD_S); degraded: the target changed during its search, a "
                      "rate it carried failed later (`degraded` says why); testbed-bound: the figure is this "
                      "machine's ceiling, not the application's (`testbed_bound` says why); held-short: a search "
                      "ran out of steps during its hold (`held_short` says how long it held); none: no capacity",
                      default="")
    degraded: dict | None = doc("a degraded target: sentence, cause, the rate carried and its step, per node each "
                                "state series that grew [before, after] (capbench/analysis/state_drift.py)", default=None)
    testbed_bound: dict | None = doc("where the capacity is the testbed's limit (capbench/analysis/testbed_ceiling.py): "
                                     "sentence, rule (ceiling, or unsaturated nodes on a busy machine), the "
                                     "figures behind it and the remedy", default=None)
    held_short: str | None = doc("where a repeat's capacity was held for less than HOLD_S (out of steps): how long",
                                 default=None)
    memory_unsustained: dict | None = doc("where at the capacity a node starts more sessions a second than its heap "
                                          "sustains (memory_capacity's new users/s): sentence, per node the rates "
                                          "and the seconds until its heap is full", default=None)

    def to_json(self) -> dict:
        data = asdict(self)
        if self.metrics_at_capacity is None:  # written only where the run was monitored
            del data["metrics_at_capacity"]
        return data

    @classmethod
    def from_json(cls, data: dict) -> TargetSummary:
        return cls(**known(cls, data))


@dataclass
class Summary:
    """summary.json: written when the run ends, however it ends; the common part for every kind, then the
    kind's findings under its name (its report section reads them)."""
    run_id: str = doc("the run's id, its folder's name")
    kind: str = doc("the bench kind (kinds/)")
    status: str = doc("complete; degraded: it ended, but a machine or host was lost on the way (`events`); "
                      "partial: it broke off; failed: the kind's own verdict")
    targets: dict[str, TargetSummary] = doc("per search label (node1, cluster v2, N=2, ...)")
    error: str | None = doc("why the run did not complete", default=None)
    driver: dict[str, str] = doc("name and version of the load generator", default_factory=dict)
    slo: dict[str, float] = doc("failure_pct, p99_ms, achieved_pct: what a step must meet to pass",
                                default_factory=dict)
    calibration: dict | None = doc("the machine's calibration at the run's start (capbench/analysis/calibration.py)",
                                   default=None)
    smoke: bool = doc("QUICK=1 with a hold under 60 s: a smoke run, whose figures no client was seen to hold for "
                      "60 s; never a baseline", default=False)
    testbed_ceiling: dict | None = doc("what the machine can send and balance beside the nodes: the harness's CPU a "
                                       "request (from the run's steps, else the direct check), the cores the nodes' "
                                       "quotas leave, the ceiling beside each target's nodes, the direct check "
                                       "(capbench/analysis/testbed_ceiling.py)", default=None)
    steps: int = doc("steps run", default=0)
    elapsed_s: float = doc("the run's length", default=0.0)
    lb_events: list[dict] = doc("HAProxy's DOWN/UP changes of the nodes: node, state, epoch, t_s",
                                default_factory=list)
    events: list[dict] | None = doc("what the run lost, in the order seen: what (machine lost, host down), machine, "
                                    "roles (all it ran), hosts (those seen gone), epoch, t_s, seen (how), "
                                    "sentence (capbench/engine/losses.py)", default=None)
    warmups: dict | None = doc("the warm-ups' outcomes", default=None)
    skipped: dict[str, str] | None = doc("per label, why its search was skipped", default=None)
    disturbed: dict[str, list[str]] | None = doc("per label, the node outages while its steps ran", default=None)
    lb_flaps: dict[str, int] | None = doc("per label, short DOWNs (an overloaded node failing its checks)",
                                          default=None)
    monitoring: dict | None = doc("PCP's account of the run (MONITOR=on)", default=None)
    summary_error: str | None = doc("why the kind's analysis failed (what was measured is kept)", default=None)
    profiles: dict | None = doc("JFR=on: per label, the profile at its capacity: its pairs of steps, the overhead "
                                "over them, each node's files (the tables whole in profiles.json)", default=None)
    load_hosts: dict | None = doc("several load hosts: each one's share and CPU (capbench/rundata/generators.py)",
                                  default=None)
    tune_point: dict | None = doc("make tune: the point this run measured", default=None)
    memory_capacity: dict | None = doc("per node that held sessions: kB of live heap per session (method: two full "
                                       "collections around a search, or a fit of the steps), the sessions its "
                                       "heap holds, the session timeout, the new users/s it sustains "
                                       "(capbench/analysis/memory_capacity.py)", default=None)
    # Each kind's findings under its name (kinds/<kind>.py, Kind.findings), read back with findings().
    others: dict[str, Any] = doc("the kind's findings under its name, and entries of earlier versions, by key "
                                 "(findings())", default_factory=dict)

    @classmethod
    def from_json(cls, data: dict) -> Summary:
        named = known(cls, data)
        return cls(**{**named, "targets": targets_of(data),
                      "others": {k: v for k, v in data.items() if k not in named and k not in ("schema", "others")}})

    def to_json(self) -> dict:
        """summary.json as written: the schema, the fields (an optional one only where the run has it), the
        targets through their own type, then the kind's findings and earlier entries (others) at the top level."""
        data = {f.name: getattr(self, f.name) for f in fields(self) if f.name not in ("targets", "others")}
        data = {k: v for k, v in data.items() if v is not None or k in ALWAYS_WRITTEN}
        targets = {label: target.to_json() for label, target in self.targets.items()}
        return {"schema": SUMMARY_SCHEMA, **data, "targets": targets, **self.others}

    def findings(self, cls: type[F]) -> F:
        """A kind's findings (a rundata.findings.Findings class) as the run wrote them; empty when it found
        nothing or was another kind's run."""
        return cls.in_summary(self.others)


def targets_of(data: dict) -> dict[str, TargetSummary]:
    """summary.json's targets, typed, from the summary as written (or as the run is writing it)."""
    return {label: TargetSummary.from_json(t) for label, t in (data.get("targets") or {}).items()}


def of_label(record: StepRecord, label: str) -> bool:
    """Whether a step belongs to a search label ("node1", "cluster v2", "node1 monitor on"); steps recorded
    before steps carried their label belong to the label's first word, their target."""
    if record.label:
        return record.label == label
    return record.target == label.split()[0]


HELD_SHORT = "held-short"  # a search's status: its capacity was not held for the whole hold (out of steps)
# The searches' statuses whose capacity is a figure of the target: found, and held-short (a figure within the
# precision, held for less than the hold: the target's status says so, and the gate does not judge it).
FIGURE_STATUSES = ("found", HELD_SHORT)


def found_capacities(searches: list[dict]) -> list[float]:
    """The capacities a target's repeated searches found."""
    return [s["capacity_rps"] for s in searches if s.get("capacity_rps") and s.get("status") in FIGURE_STATUSES]


def capacity_of(searches: list[dict]) -> float | None:
    """The median capacity over a target's repeated searches (None when none found one)."""
    caps = found_capacities(searches)
    return statistics.median(caps) if caps else None


def interval_of(searches: list[dict]) -> list[float] | None:
    """Where the capacity may lie by everything the repeats saw: from the lowest low end of their intervals
    (capbench/search/capacity.py: the bracket, widened by steps that disagreed) to the highest high end."""
    intervals = [s["interval_rps"] for s in searches if s.get("interval_rps")]
    return [min(i[0] for i in intervals), max(i[1] for i in intervals)] if intervals else None


def target_summary(searches: list[dict]) -> dict:
    """A target's entry in summary.json as written: its capacity (the median of its repeats), each repeat's, the
    spread, the interval the searches saw, and the searches that ran out of steps before the precision."""
    caps = found_capacities(searches)
    return TargetSummary(
        capacity_rps=capacity_of(searches), repeats=caps, interval_rps=interval_of(searches),
        unresolved=[s["interval_rps"] for s in searches if s.get("status") == "unresolved"],
        min_rps=min(caps) if caps else None, max_rps=max(caps) if caps else None,
        spread_pct=round(100 * (max(caps) - min(caps)) / statistics.median(caps), 1) if len(caps) > 1 else None,
        searches=searches).to_json()


def steps_at(records: list[StepRecord], label: str, capacity: float | None) -> list[StepRecord]:
    """The label's passed steps at the capacity found, in order (none for no capacity; with REPEATS the
    median's rate may not have been measured). Steps at a capacity already found (AT_CAPACITY_PHASES) are left out."""
    if capacity is None:
        return []
    return [r for r in records if of_label(r, label) and r.passed and r.result.offered_rps == capacity
            and r.phase not in AT_CAPACITY_PHASES]


def metrics_at(records: list[StepRecord], label: str, capacity: float | None) -> dict | None:
    """The host figures of the label's last logged step at the capacity found (steps_at), or None. When no step
    ran at it (the median of an even number of repeats lies between two), the passed rate nearest to it stands
    for it (the lower of two as near), and its step number says which."""
    at = [r for r in steps_at(records, label, capacity) if r.host_metrics is not None]
    if not at and capacity is not None:
        logged = [r for r in records if of_label(r, label) and r.passed and r.host_metrics is not None
                  and r.phase not in AT_CAPACITY_PHASES]
        nearest = min((r.result.offered_rps for r in logged), key=lambda rate: (abs(rate - capacity), rate),
                      default=None)
        at = [r for r in logged if r.result.offered_rps == nearest]
    return {"step": at[-1].step, **at[-1].host_metrics} if at else None


def client_leg_at(records: list[StepRecord], label: str, capacity: float | None) -> dict | None:
    """The client leg of the label's last step at the capacity found that recorded one (steps_at), or None."""
    at = [r for r in steps_at(records, label, capacity) if r.client_leg is not None]
    return {"step": at[-1].step, **at[-1].client_leg} if at else None


def node_figures(host_metrics: dict | None) -> dict[str, dict]:
    """The nodes' entries of a step's host_metrics (the others are the balancer's, the load host's and the
    request cross-check): those with a grind request rate, counted or not."""
    return {host: figures for host, figures in (host_metrics or {}).items()
            if isinstance(figures, dict) and "grind_requests_per_s" in figures}


def serving_nodes(host_metrics: dict | None) -> dict[str, dict]:
    """The nodes that served requests in a step, with their figures: those the Grinder's workload servlets
    counted requests on (/grind, /query or /session); with a user's application, whose every request counts,
    its health path's checks among them, those HAProxy sent requests to (where the balancer was monitored)."""
    servers = ((host_metrics or {}).get("lb") or {}).get("servers") or {}

    def served(host: str, figures: dict) -> bool:
        grinder = [figures.get(f"{servlet}_requests_per_s") for servlet in workload.SERVLETS]
        if figures.get("app_requests_per_s") is None and any(count is not None for count in grinder):
            return any(grinder)
        # A user's application, or a JAR whose server Tomcat's MBeans do not count (none on an embedded Jetty).
        if servers:
            return bool((servers.get(host) or {}).get("responses_per_s"))
        return bool(figures.get("app_requests_per_s"))

    return {host: figures for host, figures in node_figures(host_metrics).items() if served(host, figures)}
