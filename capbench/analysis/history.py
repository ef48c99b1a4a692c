"""Capacity across changes: results/history.jsonl gets one line per run (time, git sha, config hash,
capacities and each repeat's, E, driver, the machine's calibration), and two runs are compared target by target.

A change is judged with the exact rank interval of the ratio B/A over the two runs' repeats (report/
significance.py): SIGNIFICANT when the interval, widened by the search's precision, leaves out "no change",
"not significant" when it does not; with fewer than three repeats on either side the noise between repeats is
not measured and the verdict is CANNOT TELL. The interval holds the noise between the repeats of each run,
not what moves between runs (two runs of the same code on our shared machine, 14 minutes apart, differed by
25 %): runs far apart in time, on different machines or whose calibrations differ say so beside the verdict."""
from __future__ import annotations

import calendar
import hashlib
import json
import re
import time
from dataclasses import dataclass

from capbench.analysis import calibration, significance
from capbench.rundata import events, workload
from capbench.rundata.history import HistoryLine
from capbench.rundata.run import EARLIER_BACKEND, RunRecord
from capbench.rundata.summary import Summary

# Settings that do not change what is measured, only how long or how often: left out of the config hash.
NOT_CONFIG = {"repeats", "max_steps", "selfcheck_rate", "monitor"}
# Runs further apart than this are flagged beside their verdict: over a day the machine itself (other tenants,
# updates, a reboot) is more likely to have changed than within one session, and no run's repeats can see that.
# Closer is no guarantee: the 25 % above came from runs 14 minutes apart.
FAR_APART_H = 24.0
TIME_FORMAT = "%Y-%m-%dT%H:%M:%SZ"


# The build under test, for make gate: what ships with the application rather than how it is measured. The
# servlet's code (VARIANT stands for it here: the study's variants are successive versions of one servlet), a
# user's application (its WAR, and what the file held), Tomcat's connector and pool, the database pool and cache,
# and each JVM's heap and collector. The rest (workload, SLO, driver, quotas, balancer, topology, backend) is the
# bench, which must be the same for a gate to compare two builds.
BUILD_SETTINGS = ("variant",)
BUILD_CLUSTER_SETTINGS = re.compile(
    r"APP_WAR|APP_SHA256|TOMCAT_\w+|DB_POOL_\w+|DB_CONNECTION_SCOPE|DB_CACHE_\w+|NODE\d*_(HEAP|GC)")


# A kind's own settings matter to its runs only: bench-usl's levels, bench-sessions' sizes.
KIND_SETTINGS = {"usl_levels": "usl", "session_sizes": "sessions"}
# A workload's own settings matter only to its runs: a run leaves out the others' (and a Grinder run the workload's
# name), and the shared database's cluster settings count on the database only, so a Grinder run's hashes and
# build match those of the runs from before the other workloads existed.
WORKLOAD_SETTINGS = {"query": ("workload", "query"), "session": ("workload", "session_kb")}
OTHER_WORKLOADS_SETTINGS = {name for names in WORKLOAD_SETTINGS.values() for name in names}
DATABASE_CLUSTER_SETTINGS = re.compile(r"DB_\w+")


def _on_database(run: RunRecord) -> bool:
    return run.settings.get("workload") == "query"


# Settings whose "off" is how runs from before they existed ran: a balancer without stickiness, sessions not
# replicated, no cache of reads (whose TTL then says nothing), clear text end to end.
OFF_AS_BEFORE = (("LB_STICKY", "none"), ("TOMCAT_SESSION_REPLICATION", "0"), ("DB_CACHE_SIZE", "0"), ("TLS", "off"))
WITH_THE_CACHE = ("DB_CACHE_TTL_S",)
# Bench settings whose default is how runs from before they existed sent: HTTP/1.1 on the client's leg, over
# connections kept for the step.
AS_BEFORE = (("http", "1.1"), ("connection_life", "keep"))


def _cluster(run: RunRecord) -> dict:
    settings = run.cluster_settings
    cache_off = settings.get("DB_CACHE_SIZE", "0") == "0"
    cluster = {k: v for k, v in settings.items()
               if (k, v) not in OFF_AS_BEFORE and not (cache_off and k in WITH_THE_CACHE)}
    return cluster if _on_database(run) else {k: v for k, v in cluster.items()
                                              if not DATABASE_CLUSTER_SETTINGS.fullmatch(k)}


def _basis(run: RunRecord) -> dict:
    """What makes two runs comparable: the kind, the bench settings, the driver, the cluster's settings and what
    runs the hosts (VMs are not containers; runs from before the Vagrant backend are Compose runs)."""
    settings = {k: v for k, v in run.settings.items() if k not in NOT_CONFIG and (k, v) not in AS_BEFORE
                and KIND_SETTINGS.get(k, run.kind) == run.kind
                and (k not in OTHER_WORKLOADS_SETTINGS
                     or k in WORKLOAD_SETTINGS.get(run.settings.get("workload"), ()))}
    basis = {"kind": run.kind, "settings": settings, "driver": run.driver.get("name"),
             "profile": run.profile, "cluster": _cluster(run)}
    if run.backend != EARLIER_BACKEND:  # the hash of a run from before backends were recorded stays as it was
        basis["backend"] = run.backend
    return basis


def _hash(basis: dict) -> str:
    return hashlib.sha256(json.dumps(basis, sort_keys=True).encode()).hexdigest()[:12]


def config_hash(run: RunRecord) -> str:
    return _hash(_basis(run))


def build_of(run: RunRecord) -> dict[str, str]:
    """The run's build settings (BUILD_SETTINGS, BUILD_CLUSTER_SETTINGS) by name, as the user sets them."""
    settings, cluster = run.settings, _cluster(run)
    return {**{name.upper(): str(settings[name]) for name in BUILD_SETTINGS if name in settings},
            **{name: value for name, value in cluster.items() if BUILD_CLUSTER_SETTINGS.fullmatch(name)}}


def bench_hash(run: RunRecord) -> str:
    """The configuration without the build: two runs of one bench on two builds share it (make gate)."""
    basis = _basis(run)
    basis["settings"] = {k: v for k, v in basis["settings"].items() if k not in BUILD_SETTINGS}
    basis["cluster"] = {k: v for k, v in basis["cluster"].items() if not BUILD_CLUSTER_SETTINGS.fullmatch(k)}
    return _hash(basis)


def history_line(run: RunRecord, summary: Summary, own: dict | None = None) -> HistoryLine:
    """The run's line; `own`: the kind's figures for it (Kind.history: E, the USL's, E(N), ...)."""
    targets = summary.targets
    return HistoryLine(
        time=time.strftime(TIME_FORMAT, time.gmtime()), run_id=summary.run_id, kind=summary.kind,
        status=summary.status, git_sha=run.git_sha, backend=run.backend,
        config_hash=config_hash(run), bench_hash=bench_hash(run), build=build_of(run), driver=summary.driver,
        workload=workload.describe(run.settings), precision_pct=run.settings.get("precision_pct"),
        capacities={t: v.capacity_rps for t, v in targets.items()}, repeats={t: v.repeats for t, v in targets.items()},
        calibration=calibration.of(summary) or calibration.of(run),
        degraded={t: v.degraded["cause"] for t, v in targets.items() if v.degraded} or None,
        smoke=summary.smoke,
        testbed_bound={t: v.testbed_bound["sentence"] for t, v in targets.items() if v.testbed_bound} or None,
        held_short={t: v.held_short for t, v in targets.items() if v.held_short} or None,
        lost=[events.short(e) for e in summary.events or []] or None, **(own or {}))


class CompareError(ValueError):
    """The runs asked for are not in the history, or cannot be compared."""


def find_run(history: list[HistoryLine], run_id: str) -> HistoryLine:
    """The run line whose id is `run_id` or starts with it; CompareError unless exactly one does."""
    matches = [h for h in history if h.run_id.startswith(run_id)]
    if len(matches) != 1:
        known = ", ".join(h.run_id or "?" for h in history[-5:]) or "none"
        raise CompareError(f"'{run_id}' matches {len(matches)} runs in the history (last ones: {known})")
    return matches[0]


def complete_runs(history: list[HistoryLine]) -> list[HistoryLine]:
    """The runs that ended normally and found a capacity."""
    return [h for h in history if h.status == "complete" and any(h.capacities.values())]


def pick(history: list[HistoryLine], a: str | None, b: str | None) -> tuple[HistoryLine, HistoryLine]:
    """Runs A and B by id (or unique prefix); by default the last two complete runs with the same config."""
    if a and b:
        return find_run(history, a), find_run(history, b)
    if a or b:
        raise CompareError("give both A= and B=, or neither (then the last two comparable runs are compared)")
    complete = complete_runs(history)
    for newer in reversed(complete):
        older = [h for h in complete if h.config_hash == newer.config_hash and h is not newer
                 and complete.index(h) < complete.index(newer)]
        if older:
            return older[-1], newer
    raise CompareError("no two complete runs with capacities and the same configuration in the history: run "
                       "the same bench twice, or name two runs with A= and B=")


@dataclass(frozen=True)
class Change:
    target: str
    a_rps: float | None
    b_rps: float | None
    a_repeats: int
    b_repeats: int
    change_pct: float | None  # B's median against A's
    interval: significance.RatioInterval | None  # B/A, where both sides have enough repeats
    verdict: str  # SIGNIFICANT, not significant, CANNOT TELL
    why: str  # for CANNOT TELL: what is missing


def compare(a: HistoryLine, b: HistoryLine) -> list[Change]:
    """Each target both runs measured: the change of the median capacity and, with MIN_REPEATS repeats a side,
    its interval and verdict."""
    changes = []
    for target in [t for t in a.capacities if t in b.capacities]:
        ca, cb = a.capacities[target], b.capacities[target]
        ra = [c for c in a.repeats.get(target, []) if c]
        rb = [c for c in b.repeats.get(target, []) if c]
        change = round(100 * (cb - ca) / ca, 1) if ca and cb else None
        interval, why = None, ""
        if change is None:
            why = f"no capacity found in {'A' if not ca else 'B'}"
        else:
            try:
                interval = significance.ratio_interval(ra, rb, a.precision_pct or 0.0, b.precision_pct or 0.0)
            except significance.TooFewRepeats as problem:
                why = str(problem)
        verdict = ("CANNOT TELL" if interval is None
                   else "SIGNIFICANT" if interval.excludes_no_change else "not significant")
        changes.append(Change(target, ca, cb, len(ra), len(rb), change, interval, verdict, why))
    return changes


def epoch_of(line: HistoryLine) -> float | None:
    """When the run ended (its history line's time), else when it started (its id's time); None if neither."""
    for text, form in ((line.time, TIME_FORMAT), (line.run_id[:16], "%Y%m%dT%H%M%SZ")):
        try:
            return float(calendar.timegm(time.strptime(text or "", form)))
        except ValueError:
            continue
    return None


def hours_apart(a: HistoryLine, b: HistoryLine) -> float | None:
    ta, tb = epoch_of(a), epoch_of(b)
    return abs(tb - ta) / 3600 if ta is not None and tb is not None else None


def caveats(a: HistoryLine, b: HistoryLine) -> list[str]:
    """What the verdicts cannot account for, as short tags: runs far apart, other machines, calibrations."""
    tags = []
    apart = hours_apart(a, b)
    if apart is not None and apart > FAR_APART_H:
        tags.append(f"{apart:.0f} h apart")
    return tags + calibration.differences(calibration.of(a), calibration.of(b))


def series(lines: list[HistoryLine]) -> dict[tuple[str, str, str], list[int]]:
    """Which runs to join with a line: per target, the runs of one configuration on one machine (x = position
    among the runs with capacities). A line between two configurations would read as a trend that is really a
    change of workload, and one between two machines as a trend that is a change of hardware (runs whose machine
    is unknown, from before calibration, make a series of their own)."""
    joined: dict[tuple[str, str, str], list[int]] = {}
    for i, line in enumerate(lines):
        machine = calibration.machine(calibration.of(line)) or ""
        for target, capacity in line.capacities.items():
            if capacity:
                joined.setdefault((target, line.config_hash, machine), []).append(i)
    return joined


def machine_flags(lines: list[HistoryLine]) -> dict[int, list[str]]:
    """Per run, what changed in its machine since the previous run of the same configuration: another machine,
    or a calibration beyond CALIBRATION_NOISE_PCT (calibration.differences); runs without a flag are left out."""
    flags: dict[int, list[str]] = {}
    last: dict[str, HistoryLine] = {}
    for i, line in enumerate(lines):
        before = last.get(line.config_hash)
        if before is not None:
            tags = calibration.differences(calibration.of(before), calibration.of(line))
            if tags:
                flags[i] = tags
        last[line.config_hash] = line
    return flags
