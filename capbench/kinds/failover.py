"""make bench-failover: a node dies, freezes or loses its network under load, and comes back.

The cluster runs one constant-rate step of FAILOVER_S seconds at a rate the other two nodes can carry (half
their capacity, measured first unless FAILOVER_RATE is given). FAULT_AT_S seconds in, the backend's fault() strikes
FAULT_NODE (hosts/): kill (SIGKILL, held down), freeze (every process stopped where it is, as in a very long GC
pause), partition (every packet to or from its bench address dropped on its own machine) or delay (latency and
loss added to its packets by netem; capbench/hosts/netfault.py); FAULT_FOR_S seconds later it is undone. The fault's moment
is read from what did it (Docker's events, systemd, the clock of the node's machine when nft or tc returned). HAProxy logs every request meanwhile (LB_LOG_REQUESTS=1,
capbench/hosts/haproxy_log.py), and its state changes say when it noticed. From these:

  detection   time from the fault to HAProxy marking the node DOWN (goal: at most 2 s)
  failures    each failed request, by kind (HTTP status, who ended it in which phase), by node and by when it
              was accepted: in flight on the node at the fault, sent to it before HAProxy noticed, after, or
              once the node was back (goals: no more failures than requests in flight at the fault; none accepted
              after detection; none after its return, where a JVM started anew answers its first requests)
  recovery    time from the restart to HAProxy marking it UP, and to its first answered request
  sessions    with WORKLOAD=session: the users whose request found no session they had had (capbench/analysis/session_loss.py),
              over the step and from the fault on; with LB_STICKY=none every move between nodes loses one, with
              LB_STICKY=user only the killed node's users do

The generator's own count of failures (the step record) is kept beside HAProxy's. They differ by design when a
node dies with requests in flight on kept-alive connections: HAProxy then closes the client's connection without
an answer and without a log line, so that the client retries (its `abort_keep_alive`, "the client is required to
retry"). Our generators do not retry: each such request is a read error ("connection closed before message
completed"), counted here as failed and as in flight at the fault (tcpdump, kill of node1 at 150/s: the 3 read
errors were 3 requests sent to node1 16 ms before to 17 ms after Docker's kill event, closed 28 ms after it, when
node1's connections broke)."""
from __future__ import annotations

import gzip
import threading
import time
from collections import Counter
from dataclasses import dataclass

from capbench.analysis import session_loss
from capbench.engine.kind import Kind, KindSettings, Needs, Showing, keep_analysis
from capbench.engine.progress import say
from capbench.hosts import haproxy, haproxy_log, netfault, topology
from capbench.hosts.backend import ClusterError, Delay, Done, backend
from capbench.report.sections import Figure, ReportSection, RunResults, fragment_beside
from capbench.rundata.findings import Findings
from capbench.rundata.records import doc
from capbench.settings.fields import auto_or, choice, integer, node_choice, number, setting

DETECTION_GOAL_S = 2.0
# HAProxy stamps a request's acceptance in whole milliseconds, and its threads mark a server DOWN while others
# dispatch: a request the node got in the millisecond after the DOWN event was sent as the node was being marked
# down, so it counts with those sent before detection (docs/findings.md: Faults and overload).
SAME_MOMENT_S = 0.001
# Once HAProxy has the node back (UP), its failures are no longer the fault's but its return's: a JVM started
# anew answers its first requests slowly (in CI beside other benches, a Swarm task's first five took over 5 s).
AFTER_RETURN = "after its return"
FAULTS = ("kill", "freeze", *netfault.FAULTS)
# What undoes each fault, in the console's and the report's words.
UNDONE_BY = {"kill": "restart", "freeze": "thaw", "partition": "reconnection", "delay": "delay's end"}
# A slowed node still answers its checks: HAProxy is not expected to take it out, nor its requests to fail.
STILL_ANSWERS = ("delay",)


@dataclass(frozen=True)
class FailoverSettings(KindSettings):
    fault: str = setting("FAULT", "kill", choice(FAULTS),
                         "what happens to FAULT_NODE: kill (SIGKILL, its container or service stopped), freeze "
                         "(every process stopped, as in a long GC pause), partition (cut from the bench network on "
                         "its own machine) or delay (FAULT_DELAY_MS and FAULT_LOSS_PCT added by the kernel's netem; "
                         "refused where the node's kernel has none)")
    fault_node: str = setting("FAULT_NODE", "node1", node_choice(), "the node the fault strikes")
    fault_at_s: int = setting("FAULT_AT_S", "20", integer(5, 3600), "seconds into the failover step")
    fault_for_s: int = setting("FAULT_FOR_S", "20", integer(1, 3600), "how long the node stays dead or frozen (s)")
    fault_delay_ms: int = setting("FAULT_DELAY_MS", "100", integer(1, 10000),
                                  "FAULT=delay: latency added to each packet the node sends (ms)")
    fault_loss_pct: float = setting("FAULT_LOSS_PCT", "1", number(0, 100),
                                    "FAULT=delay: % of the packets the node sends that are dropped")
    failover_s: int = setting("FAILOVER_S", "90", integer(10, 7200), "the failover step's length (s)", quick="60")
    failover_rate: float | None = setting(
        "FAILOVER_RATE", "auto", auto_or(number(0, 1_000_000, low_open=True)),
        "the step's rate (requests/s); auto: FAILOVER_LOAD_PCT % of the other nodes' capacity, measured first")
    failover_load_pct: float = setting("FAILOVER_LOAD_PCT", "50", number(1, 100),
                                       "FAILOVER_RATE=auto: the % of the other nodes' capacity")

    def problems(self) -> list[str]:
        if self.fault_at_s + self.fault_for_s >= self.failover_s:
            return [f"FAILOVER_S='{self.failover_s}' is not allowed: use more than FAULT_AT_S + FAULT_FOR_S "
                    f"({self.fault_at_s} + {self.fault_for_s}), so the step sees the node come back"]
        return []

    def delay(self) -> Delay | None:
        return Delay(self.fault_delay_ms, self.fault_loss_pct) if self.fault == "delay" else None


UNLOGGED_KIND = "connection closed with no answer, not in HAProxy's log (the generator's read errors)"
BACK_TIMEOUT_S = 180  # after the step, how long the node may take to pass its checks again


class FaultSchedule(threading.Thread):
    """Injects the fault `at_s` seconds after start() and recovers `for_s` seconds later; a cancel (an
    interrupted step) recovers at once whatever was injected."""

    def __init__(self, node: str, fault: str, at_s: float, for_s: float, delay: Delay | None = None):
        super().__init__(daemon=True, name="fault-schedule")
        self.node, self.fault, self.at_s, self.for_s, self.delay = node, fault, at_s, for_s, delay
        self.injected_at: float | None = None
        self.recovered_at: float | None = None
        self.injected: Done | None = None
        self.recovered: Done | None = None
        self.error: Exception | None = None
        self._cancel = threading.Event()
        self._lock = threading.Lock()

    def run(self) -> None:
        try:
            if self._cancel.wait(self.at_s):
                return
            with self._lock:
                self.injected = backend().fault(self.node, self.fault, "inject", self.delay)
                self.injected_at = self.injected.at
            if self._cancel.wait(self.for_s):
                return
            self._recover()
        except Exception as problem:  # reported by the bench after the step; the node is recovered there
            self.error = problem

    def _recover(self) -> None:
        with self._lock:
            if self.injected_at is not None and self.recovered_at is None:
                self.recovered_at = time.time()  # until the recovery says when it took effect
                self.recovered = backend().fault(self.node, self.fault, "recover", self.delay)
                self.recovered_at = self.recovered.at

    def finish(self) -> None:
        """Stops the schedule; a node left dead or frozen is brought back."""
        self._cancel.set()
        self.join(timeout=120)
        self._recover()


def analyze(requests: list[haproxy_log.Request], changes: list[haproxy_log.StateChange], node: str, fault_at: float,
            recovered_at: float | None, start: float, end: float, unlogged: int = 0, still_answers: bool = False) -> dict:
    """The failover's figures from HAProxy's request log and state changes; times in seconds from `start`.
    `unlogged`: requests the generator saw closed without an answer that HAProxy did not log (see above).
    `still_answers`: the fault slows the node without silencing it, so no detection is expected, and no failure."""
    def rel(t: float | None) -> float | None:
        return round(t - start, 3) if t is not None else None

    down = next((c.at for c in changes if c.server == node and c.state == "DOWN" and c.at >= fault_at), None)
    # Back by its checks (UP), or, where its name vanished with it (a Swarm task), by DNS (UP/READY).
    up = next((c.at for c in changes if c.server == node and c.state in ("UP", "READY") and recovered_at is not None
               and c.at >= recovered_at), None)
    in_flight = [r for r in requests if r.server == node and r.received <= fault_at < r.end]
    failed = [r for r in requests if r.failed]

    def accepted(r: haproxy_log.Request) -> str:
        if r.received < fault_at:
            return "before the fault"
        if down is None or r.received < down + SAME_MOMENT_S:
            return "between the fault and its detection"
        if up is not None and r.received >= up:
            return AFTER_RETURN
        return "after detection"
    first_answer = min((r.end for r in requests if r.server == node and not r.failed and recovered_at is not None
                        and r.received >= recovered_at), default=None)
    detection = round(down - fault_at, 3) if down is not None else None
    when = [accepted(r) for r in failed]
    after_detection = [r for r, w in zip(failed, when) if w == "after detection"]
    after_return = [r for r, w in zip(failed, when) if w == AFTER_RETURN]

    def by_kind(these: list[haproxy_log.Request]) -> dict[str, int]:
        return dict(Counter(f"{r.kind} ({r.server})" for r in these).most_common())
    return {
        "fault_s": rel(fault_at), "detected_s": rel(down), "recovered_s": rel(recovered_at), "up_s": rel(up),
        "first_answer_s": rel(first_answer),
        "detection_s": detection,
        "time_to_up_s": round(up - recovered_at, 3) if up is not None and recovered_at is not None else None,
        "time_to_traffic_s": round(first_answer - recovered_at, 3)
        if first_answer is not None and recovered_at is not None else None,
        "requests": len(requests), "in_flight_at_fault": len(in_flight) + unlogged,
        "failed": len(failed) + unlogged, "closed_unlogged": unlogged,
        "failed_by_kind": {**by_kind(failed), **({UNLOGGED_KIND: unlogged} if unlogged else {})},
        "failed_by_when": dict(Counter(when) + Counter({"in flight when its node's connection broke": unlogged})),
        "failed_after_detection_by_kind": by_kind(after_detection),
        "failed_after_return_by_kind": by_kind(after_return),
        "failed_times_s": [rel(r.end) for r in failed][:2000],
        "redispatched": sum(1 for r in requests if r.redispatched),
        # A frozen node still accepts connections: what HAProxy sends it until its checks fail waits for the thaw.
        "sent_to_node_before_detection": sum(1 for r in requests if r.server == node and down is not None
                                             and fault_at <= r.received < down + SAME_MOMENT_S),
        "node_p99_ms": node_p99(requests, node, fault_at, recovered_at),
        "goals": {"no failed request": not failed and not unlogged} if still_answers else {
            "detection within 2 s": detection is not None and detection <= DETECTION_GOAL_S,
            "failures no more than in flight at the fault": len(failed) - len(after_return) <= len(in_flight),
            "no failure accepted after detection": down is not None and not after_detection,
            "no failure after its return": not after_return},
        "per_second": haproxy_log.per_second(requests, start, end),
    }


def node_p99(requests: list[haproxy_log.Request], node: str, fault_at: float,
             recovered_at: float | None) -> dict[str, int | None]:
    """The 99th percentile of HAProxy's total time (ms) of the node's answered requests accepted before the fault,
    during it, and after it was undone: what a slowed node costs its users."""
    phases: dict[str, list[int]] = {"before": [], "during": [], "after": []}
    for r in requests:
        if r.server == node and not r.failed:
            during = r.received >= fault_at and (recovered_at is None or r.received < recovered_at)
            phases["before" if r.received < fault_at else "during" if during else "after"].append(r.total_ms)
    return {phase: haproxy_log.p99(times) for phase, times in phases.items()}


def failover(bench) -> dict:
    """The analysis of one fault under load (kept in failover.json), after a search for the rate if none given."""
    own = Failover.own(bench.settings)
    node = own.fault_node
    rate = own.failover_rate
    if rate is None:
        label = f"without {node}"
        bench.search(label, repeats=1)
        capacity = bench.capacity(label)
        if not capacity:
            raise ClusterError(f"no capacity was found for the nodes other than {node}, so no rate "
                               "they can carry is known: give FAILOVER_RATE=")
        rate = round(capacity * own.failover_load_pct / 100, 1)
        say(f"failover at {rate:g}/s: {own.failover_load_pct:g} % of {capacity:g}/s, what the nodes other "
            f"than {node} carry")
    return bench.balancer.with_request_log(lambda: _failover_step(bench, node, rate))


def _failover_step(bench, node: str, rate: float) -> dict:
    s, own = bench.settings, Failover.own(bench.settings)
    haproxy.set_rotation(topology.NODES)
    haproxy.wait_until_up(topology.NODES)
    bench.steps.measure("cluster", 0, rate, "warmup", label="failover",
                        duration_s=max(s.warmup_s, bench.driver.min_step_s))
    say(f"failover: {own.fault} {node} {own.fault_at_s} s into a {own.failover_s} s step at {rate:g}/s, "
        f"back {own.fault_for_s} s later")
    schedule = FaultSchedule(node, own.fault, own.fault_at_s, own.fault_for_s, own.delay())
    schedule.start()
    try:
        # Until HAProxy marks it down, a frozen (or unreachable) node holds what it was sent: up to the 30 s of
        # its server timeout, or until it is thawed.
        record = bench.steps.measure("cluster", 1, rate, "failover", label="failover", duration_s=own.failover_s,
                                     stuck_s=DETECTION_GOAL_S + 1)
    finally:
        schedule.finish()
    if schedule.error is not None:
        raise ClusterError(f"the fault could not be done or undone: {schedule.error}")
    haproxy.wait_until_up((node,), BACK_TIMEOUT_S)
    ring = haproxy_log.read_ring(haproxy_log.REQUESTS_RING)
    (bench.paths.raw / "lb-requests.log.gz").write_bytes(gzip.compress(ring.encode()))
    result = record.result
    start, end = result.start_epoch, result.end_epoch
    # A connection closed with no answer: for oha "connection closed before message completed", for wrk2 a
    # socket read error; outside a kill our search steps have not seen one (docs/findings.md).
    unlogged = (result.errors or {}).get("read", 0)
    logged = haproxy_log.parse_requests(ring)
    requests = [r for r in logged if start - 1 <= r.received <= end]
    if schedule.injected_at is None:
        raise ClusterError(f"the step ended before the fault was due ({own.fault_at_s} s in)")
    analysis = analyze(requests, haproxy_log.state_changes(start - 1), node, schedule.injected_at,
                       schedule.recovered_at, start, end + s.timeout_s, unlogged, own.fault in STILL_ANSWERS)
    if s.workload == "session":
        # The warm-up's requests (in the ring too) tell which users already had a session where.
        until_end = [r for r in logged if r.received <= end]
        analysis["sessions"] = {"step": session_loss.sessions_lost(until_end, since=start),
                                "from_fault": session_loss.sessions_lost(until_end, since=schedule.injected_at)}
    analysis.update({"fault": own.fault, "node": node, "rate_rps": rate, "step": record.step,
                     "undone_by": UNDONE_BY[own.fault],
                     **({"delay": {"ms": own.fault_delay_ms, "loss_pct": own.fault_loss_pct}} if own.delay() else {}),
                     "fault_time": {"source": schedule.injected.source,
                                    "uncertainty_s": schedule.injected.uncertainty_s},
                     "generator": {"failures": result.failures, "errors": result.errors,
                                   "responses": result.responses}})
    say(summary_line(analysis))
    return analysis


def summary_line(a: dict) -> str:
    detection = f"{a['detection_s']:.2f} s" if a["detection_s"] is not None else "never"
    back = f"{a['time_to_traffic_s']:.1f} s" if a["time_to_traffic_s"] is not None else "no answer seen"
    p99 = a["node_p99_ms"]
    line = (f"failover: {a['fault']} {a['node']}: detected in {detection}; {a['failed']} failed "
            f"({a['in_flight_at_fault']} in flight at the fault), by when accepted: "
            f"{a['failed_by_when'] or 'none'}; back in traffic {back} after the {UNDONE_BY[a['fault']]}; "
            f"{a['node']}'s p99 before/during/after: " + " / ".join("-" if p99[k] is None else f"{p99[k]} ms"
                                                                   for k in ("before", "during", "after")))
    if "sessions" in a:
        line += f"; sessions from the fault on: {session_loss.describe(a['sessions']['from_fault'])}"
    return line


@dataclass
class FailoverFindings(Findings):
    """bench-failover: one fault under load, from HAProxy's log of every request (times in s from the step's
    start; the per-second series and the failures' times whole in capbench/analysis/failover.json)."""
    kind = "failover"
    fault: str | None = doc("FAULT: kill, freeze, partition or delay", default=None)
    node: str | None = doc("the node it was done to", default=None)
    rate_rps: float | None = doc("the step's rate", default=None)
    step: int | None = doc("the step's number", default=None)
    undone_by: str | None = doc("what undid it: restart, thaw, reconnection, the delay's end", default=None)
    delay: dict | None = doc("FAULT=delay: ms and loss_pct", default=None)
    fault_time: dict | None = doc("how the fault's instant was taken: source, uncertainty_s", default=None)
    fault_s: float | None = doc("the fault", default=None)
    detected_s: float | None = doc("HAProxy marked the node DOWN", default=None)
    recovered_s: float | None = doc("the fault undone", default=None)
    up_s: float | None = doc("HAProxy marked it UP again", default=None)
    first_answer_s: float | None = doc("its first answer after that", default=None)
    detection_s: float | None = doc("fault → DOWN", default=None)
    time_to_up_s: float | None = doc("undone → UP", default=None)
    time_to_traffic_s: float | None = doc("undone → first answer", default=None)
    requests: int = doc("requests in HAProxy's log during the step", default=0)
    in_flight_at_fault: int = doc("on the node when the fault came (with the closed unlogged)", default=0)
    failed: int = doc("failed requests (with the closed unlogged)", default=0)
    closed_unlogged: int = doc("requests the generator saw closed that HAProxy did not log", default=0)
    failed_by_kind: dict[str, int] = doc("failures by kind (and node)", default_factory=dict)
    failed_by_when: dict[str, int] = doc("failures by when HAProxy accepted them", default_factory=dict)
    failed_after_detection_by_kind: dict[str, int] = doc("failures accepted after detection, by kind",
                                                         default_factory=dict)
    failed_after_return_by_kind: dict[str, int] = doc("failures after the node's return, by kind",
                                                      default_factory=dict)
    redispatched: int = doc("requests retried on another node", default=0)
    sent_to_node_before_detection: int = doc("sent to the node between the fault and its detection", default=0)
    node_p99_ms: dict[str, float | None] = doc("the node's p99 of HAProxy's total time before, during and after "
                                               "the fault", default_factory=dict)
    goals: dict[str, bool] = doc("each goal and whether it was met", default_factory=dict)
    sessions: dict | None = doc("WORKLOAD=session: sessions lost over the step and from the fault on "
                                "(capbench/analysis/session_loss.py)", default=None)
    generator: dict = doc("the generator's count: failures, errors, responses", default_factory=dict)


# The analysis's per-second series and failure times stay in failover.json, out of the summary.
SERIES = ("per_second", "failed_times_s")


# Its part of report.html (capbench/report/sections.py): the fault, its detection, what it cost, the goals.
REPORT = fragment_beside(__file__)  # failover.html, a Jinja2 fragment


def report_values(results: RunResults) -> dict:
    return {"failover": results.findings(FailoverFindings)}


def report_figures(results: RunResults) -> list[Figure]:
    from capbench.report import figures  # matplotlib only when a report is made
    analysis = results.analysis("failover")
    return [("failover", figures.failover(analysis, results.paths.figure("failover"), results.nodes))] if analysis else []


class FailoverShown(Showing):
    """How bench-failover shows what it found (capbench/engine/kind.py's Showing)."""
    section = ReportSection((REPORT,), report_values, report_figures)


class Failover(Kind):
    name = "failover"
    description = "kill (FAULT=freeze: freeze) FAULT_NODE under load and bring it back: detection, failures, recovery"
    shows = FailoverShown()
    targets = ("cluster",)
    # a node going down is the point
    needs = Needs(flags_disturbances=False)
    own_settings = FailoverSettings
    findings = FailoverFindings

    def planned_searches(self, settings) -> int:
        return 0 if self.own(settings).failover_rate else 1

    def refusal(self, settings) -> str:
        own = self.own(settings)
        return backend().netem_missing(own.fault_node) if own.fault == "delay" else ""

    def run(self, bench, found: FailoverFindings) -> None:
        keep_analysis(bench, found, failover(bench), SERIES)


KIND = Failover()
