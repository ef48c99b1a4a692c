"""make bench-sessions: seed 002's heap full of sessions. For each of SESSION_SIZES (kB per user), node1's capacity
with WORKLOAD=session on a fresh JVM (node1 killed and started again first: its sessions live in its heap only),
then what the JVM said while the search ran: the most heap in use, the time in GC, the sessions held. Sessions last
30 minutes, so each step adds the users it reaches until the heap holds every one of USERS; when that is more than
the heap, the JVM ends on OutOfMemoryError (-XX:+ExitOnOutOfMemoryError), HAProxy marks node1 DOWN, and the search
ends there, saying so: the collapse. The figures come from PCP (MONITOR=on).

With a SCENARIO_FILE, node1 is measured once on the scenario's requests instead (a fresh JVM too): a user's
application whose requests start sessions. With oha, which keeps no cookies, every request that starts a session
is a new user, so the search's rate is the users' arrival rate and it finds where the heap gives out; the
memory capacity (capbench/analysis/memory_capacity.py) says what one session costs."""
from __future__ import annotations

from dataclasses import dataclass, replace

from capbench.engine.kind import Kind, KindSettings, Needs, Showing
from capbench.engine.progress import say
from capbench.hosts import haproxy, jvm
from capbench.hosts.backend import ClusterError, backend
from capbench.report.sections import ReportSection, RunResults, fragment_beside
from capbench.rundata.findings import Findings
from capbench.rundata.records import StepRecord, doc, read_steps
from capbench.rundata.summary import TargetSummary, of_label, targets_of
from capbench.settings.fields import setting, sizes

NODE = "node1"
BACK_TIMEOUT_S = 180  # a fresh JVM passes its checks within a minute here; a slow machine gets three


@dataclass(frozen=True)
class SessionsSettings(KindSettings):
    session_sizes: tuple[int, ...] = setting(
        "SESSION_SIZES", "0 16 32 64", sizes(1024),
        "the kB per user's session node1 is measured with, in turn, each on a fresh JVM; 0 is the request's own "
        "cost (with USERS=10000, 64 kB is 640 MB if every user comes)")


def label_of(kb: int) -> str:
    return f"{NODE} {kb} kB"


def scenario_label(settings) -> str:
    return f"{NODE} {settings.user_scenario.name}"


def fresh_jvm() -> None:
    """node1 killed and started again: a JVM without sessions (the backend's own fault, as bench-failover's). A
    JVM that ended on OutOfMemoryError has nothing left to kill: it is only started."""
    try:
        backend().fault(NODE, "kill", "inject")
    except ClusterError as problem:
        say(f"sessions: {NODE} could not be killed ({problem}); starting it")
    backend().fault(NODE, "kill", "recover")
    try:
        haproxy.wait_until_up((NODE,), BACK_TIMEOUT_S)
    except ClusterError as problem:
        raise ClusterError(f"{NODE} did not pass its checks within {BACK_TIMEOUT_S} s of its restart: {problem}")


def jvm_figures(records: list[StepRecord], label: str) -> dict:
    """The most node1's JVM held over the label's steps, from each step's PCP figures."""
    own = [r.host_metrics[NODE] for r in records if of_label(r, label) and r.host_metrics and r.host_metrics.get(NODE)]

    def most(key: str) -> float | None:
        values = [figures[key] for figures in own if isinstance(figures.get(key), (int, float))]  # PCP's, free-form
        return max(values) if values else None
    return {"heap_used_mb_max": most("heap_used_mb_max"), "gc_time_pct_max": most("gc_time_pct"),
            "sessions_max": most("sessions_max"), "steps": len(own)}


@dataclass
class SessionSize:
    """node1 measured with one session size (or on a scenario's own sessions)."""
    label: str = doc("its search label", default="")
    kb: int | None = doc("kB a user's session keeps; None: the scenario's own sessions", default=None)
    capacity_rps: float | None = doc("its capacity", default=None)
    collapsed: bool = doc("the JVM ended (OutOfMemoryError) during the search", default=False)
    why: str | None = doc("how the search ended, where not with a capacity", default=None)
    users_heap_mb: float | None = doc("every user's session together, MB", default=None)
    heap_used_mb_max: float | None = doc("the most heap in use over its search (PCP)", default=None)
    heap_used_pct_max: float | None = doc("that, % of the heap", default=None)
    gc_time_pct_max: float | None = doc("the most time in GC in a step, %", default=None)
    sessions_max: float | None = doc("the most sessions held", default=None)
    steps: int = doc("the steps its figures come from", default=0)


@dataclass
class SessionsFindings(Findings):
    """bench-sessions: node1's capacity and heap by session size."""
    kind = "sessions"
    heap_max_mb: float | None = doc("node1's maximum heap", default=None)
    users: int | None = doc("USERS: the users the requests come from", default=None)
    scenario: str | None = doc("the SCENARIO_FILE's name, where its requests were measured", default=None)
    sizes: dict[str, SessionSize] = doc("per size (kB, or the scenario's label)", default_factory=dict)


# Its part of report.html (capbench/report/sections.py): node1's capacity and heap by session size.
REPORT = fragment_beside(__file__)  # sessions.html, a Jinja2 fragment


def report_values(results: RunResults) -> dict:
    return {"sessions": results.findings(SessionsFindings)}


class SessionsShown(Showing):
    """How bench-sessions shows what it found (capbench/engine/kind.py's Showing)."""
    section = ReportSection((REPORT,), report_values)

    def console(self, summary: dict, found: SessionsFindings) -> None:
        heap = f"heap {found.heap_max_mb} MB"
        if found.scenario:
            print(f"\nnode1 on the sessions of {found.scenario}'s users ({heap})")
        else:
            print(f"\nnode1 by session size ({found.users} users; {heap})")
        print(f"{'kB/user':>8}{'all users MB':>13}{'capacity/s':>11}{'heap MB max':>12}{'heap %':>7}{'GC % max':>9}"
              f"{'sessions':>9}   ended")
        for size in found.sizes.values():
            cells = [size.kb, size.users_heap_mb, size.capacity_rps, size.heap_used_mb_max,
                     size.heap_used_pct_max, size.gc_time_pct_max, size.sessions_max]
            text = [f"{v:g}" if isinstance(v, (int, float)) else "-" for v in cells]
            ended = f"collapsed: {size.why}" if size.collapsed else (size.why or "")
            print(f"{text[0]:>8}{text[1]:>13}{text[2]:>11}{text[3]:>12}{text[4]:>7}{text[5]:>9}{text[6]:>9}   {ended}")


class Sessions(Kind):
    name = "sessions"
    description = "node1's capacity and heap by the kB each user's session keeps (SESSION_SIZES; WORKLOAD=session)"
    shows = SessionsShown()
    targets = (NODE,)
    workload = "session"
    compares = "measures node1 by the size of its users' sessions (SESSION_SIZES)"
    needs = Needs(takes_scenario_file=True,  # a SCENARIO_FILE's requests take the place of WORKLOAD=session's
                  flags_disturbances=False)  # a node that runs out of heap is the finding
    own_settings = SessionsSettings
    findings = SessionsFindings

    def planned_searches(self, settings) -> int:
        searches = 1 if settings.user_scenario is not None else len(self.own(settings).session_sizes)
        return searches * settings.repeats

    def labels(self, settings) -> dict[str, int | None]:
        """Each search's label and the kB per user it runs with (None: the scenario's own sessions)."""
        if settings.user_scenario is not None:
            return {scenario_label(settings): None}
        return {label_of(kb): kb for kb in self.own(settings).session_sizes}

    def run(self, bench, found: SessionsFindings) -> None:
        info = jvm.node_info(NODE)
        heap_max = info["heap_max_bytes"] / 2**20 if info and info.get("heap_max_bytes") else None
        scenario = bench.settings.user_scenario
        found.update({"heap_max_mb": round(heap_max, 1) if heap_max else None, "users": bench.settings.users,
                      "scenario": scenario and scenario.name})
        # No warm-up of every node first (capbench/engine/searcher.py): each search's node1 is started afresh and warmed
        # alone until steady, and node2 and node3 are not measured.
        for label, kb in self.labels(bench.settings).items():
            say(f"sessions: {label}: {NODE} started afresh")
            # PCP's logger of a node whose pmcd went away ends; the loggers start again once it is back.
            bench.with_monitoring_paused(fresh_jvm)
            bench.searcher.started_afresh.add(NODE)
            if kb is not None:
                bench.steps.change_settings(replace(bench.settings, session_kb=kb))
            bench.search(NODE, label=label)
        say(f"sessions: {NODE} started afresh, without the last search's sessions")
        bench.with_monitoring_paused(fresh_jvm)

    def summarize(self, bench, summary: dict, found: SessionsFindings) -> None:
        """Per size: the capacity (or why there is none) and the JVM's figures over its search."""
        records, targets = read_steps(bench.paths.steps), targets_of(summary)
        for label, kb in self.labels(bench.settings).items():
            target = targets.get(label, TargetSummary())
            ended = [s for s in target.searches if s["status"] == "node-down"]
            figures = jvm_figures(records, label)
            held = figures["heap_used_mb_max"]
            found.sizes[label if kb is None else str(kb)] = SessionSize(
                label=label, kb=kb, capacity_rps=target.capacity_rps, collapsed=bool(ended),
                why=ended[0]["reason"] if ended else bench.searcher.skipped.get(label),
                heap_used_pct_max=round(100 * held / found.heap_max_mb, 1) if held and found.heap_max_mb else None,
                users_heap_mb=None if kb is None else round((found.users or 0) * kb / 1024, 1), **figures)


KIND = Sessions()
