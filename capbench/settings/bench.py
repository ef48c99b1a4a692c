"""The bench settings every kind shares (each kind declares its own in its module), the environment (make passes
its command-line variables there) over their defaults, each value checked before anything starts. A bad value
gives one line naming it and what is allowed."""
from __future__ import annotations

import os
import re
from dataclasses import asdict, dataclass, field, replace
from typing import Any

from capbench.analysis import baselines, gate_verdict, significance
from capbench.settings import scenario_file as scenarios
from capbench.settings.fields import (
    Rule,
    SettingsError,
    auto_or,
    choice,
    defaults,
    file_path,
    integer,
    nested,
    number,
    read,
    setting,
    switch,
)

VARIANTS = ("v1", "v1-nosync", "v2", "v3")
SCENARIOS = ("session", "single")
WORKLOADS = ("grind", "query", "session")
LOADGENS = ("auto", "oha", "wrk2", "capload")
HTTP_VERSIONS = ("1.1", "2")
CONNECTION_LIVES = ("keep", "per-user", "per-request")
JFR_MODES = ("auto", "on", "off")
CPU_PROFILERS = ("async", "jfr")
STATE_BETWEEN = ("carry", "expire", "restart")
MAX_CONNECTIONS = 4000  # HAProxy's frontend maxconn (haproxy/haproxy.cfg)
# wrk2 spends its first 10 s calibrating and resets its latency histogram after them; 10 s more are measured.
WRK2_CALIBRATION_S = 10
WRK2_MIN_STEP_S = 2 * WRK2_CALIBRATION_S


@dataclass(frozen=True)
class Slo:
    """A step passes when all three hold (the study counts connect, read, write errors, timeouts, status >= 400 and
    responses slower than 5 s as failures)."""
    failure_pct: float = setting("SLO_FAILURE_PCT", "1", number(0, 100), "failures at most this % of the requests")
    p99_ms: float = setting("SLO_P99_MS", "500", number(0, 600_000, low_open=True),
                            "corrected p99 latency at most this many ms")
    achieved_pct: float = setting("SLO_ACHIEVED_PCT", "95", number(0, 100, low_open=True),
                                  "achieved rate at least this % of the offered rate")


@dataclass(frozen=True)
class Query:
    """What each /query request asks of the shared database (WORKLOAD=query; webapp: QueryRequest's bounds)."""
    rows: int = setting("QUERY_ROWS", "10", integer(1, 1000), "orders each statement reads")
    join: int = setting("QUERY_JOIN", "0", integer(0, 1), "1: the orders joined to their accounts")
    write_pct: int = setting("QUERY_WRITE_PCT", "0", integer(0, 100),
                             "share of statements followed by an update of the user's account (%)")
    calls: int = setting("QUERY_CALLS", "1", integer(1, 20), "statements per request")


@dataclass(frozen=True)
class Jfr:
    """The profile at each capacity found (capbench/engine/profile_step.py)."""
    at_capacity: str = setting("JFR", "auto", choice(JFR_MODES),
                               "on: after each capacity search, one step at the capacity found with JDK Flight "
                               "Recorder on every node in rotation, beside one without it (the overhead): flame "
                               "graphs and tables in the report (a duet: both slots after its last pair, and what "
                               "B spends more on than A); auto: on for bench-variants, off elsewhere")
    seconds: int = setting("JFR_STEP_S", "60", integer(5, 3600),
                           "the profiled step's length, and its unprofiled twin's (s): CPU samples come every "
                           "10 ms from at most 5 running threads, so a short step gives few", quick="10")
    pairs: int = setting("JFR_PAIRS", "3", integer(1, 20),
                         "pairs of an unprofiled and a profiled step at each capacity, their order alternating: "
                         "the overhead is their median, with its spread (the first profiled step's recordings "
                         "are kept)", quick="1")
    cpu: str = setting("CPU_PROFILER", "async", choice(CPU_PROFILERS),
                       "who samples the CPU in the profiled step: async (async-profiler's sampler, which sees a "
                       "thread inside an intrinsic or a native call; JFR still records the rest) or jfr (JFR's "
                       "own execution samples); a JVM that cannot load async-profiler says why and gets JFR's")
    cpu_interval_us: int | None = setting("CPU_PROFILER_INTERVAL_US", "auto", auto_or(integer(100, 100000)),
                                          "async-profiler's sampling interval, in µs of CPU time; auto: about "
                                          "3000 samples over the step at the node's CPU quota (at least 1 ms)")


# A QUICK run whose hold is at least this long (QUICK_HOLD_S=60) is not a smoke run: a hold of 60 s is what an
# independent 60-s client was seen to confirm.
SMOKE_BELOW_HOLD_S = 60


@dataclass(frozen=True)
class BenchSettings:
    """What every bench kind shares: the request, the load, the search and the SLO. A kind's own settings are in
    `kinds` under its name (its module declares them); every kind's are read and checked on every run, so a bad
    value is refused whichever bench is asked for, and each run records them all."""
    quick: bool = setting("QUICK", "0", switch(("0", "1"), "1"),
                          "1: a smoke run with short steps and coarse searches (the QUICK_ twins below)")
    workload: str = setting("WORKLOAD", "grind", choice(WORKLOADS),
                            "what each request asks for: grind, the Grinder servlet (CPU, garbage, a lock); query, "
                            "the shared database through each node's pool; session, state kept per user in the "
                            "node's HttpSession (needs SCENARIO=session)")
    variant: str = setting("VARIANT", "v1", choice(VARIANTS), "WORKLOAD=grind: the Grinder variant")
    level: int = setting("LEVEL", "13", integer(1, 16), "WORKLOAD=grind: the Grinder's level (its work per call)")
    work_pct: int = setting("WORK_PCT", "100", integer(100, 400),
                            "WORKLOAD=grind: the Grinder calls per request, in % of one (105: one request in twenty "
                            "calls it twice, 5 % more work per request; a duet's known small change)")
    query: Query = nested(Query)
    session_kb: int = setting("SESSION_KB", "4", integer(0, 1024),
                              "WORKLOAD=session: the kB each user's session keeps (sessions last 30 minutes)")
    scenario: str = setting("SCENARIO", "session", choice(SCENARIOS),
                            "session: each user sends SESSION_REQUESTS requests with THINK_MS between them, a "
                            "random user id of USERS; single: one URL, no user id")
    scenario_file: str = setting("SCENARIO_FILE", "", file_path(),
                                 "a YAML file of your own requests, each drawn by weight (docs/guides/"
                                 "scenario-file.md), in place of WORKLOAD's; empty: WORKLOAD's requests")
    session_requests: int = setting("SESSION_REQUESTS", "10", integer(1, 1000), "requests of a user's session")
    think_ms: int = setting("THINK_MS", "100", integer(0, 60000), "pause between a user's requests (ms)")
    users: int = setting("USERS", "10000", integer(1, 1_000_000), "user ids in the generated dataset")
    loadgen: str = setting("LOADGEN", "auto", choice(LOADGENS),
                           "the load generator: auto (capload where CONNECTION_LIFE=per-user, or per-request "
                           "with HTTP=2; else wrk2 when WRK2=/path gives a binary or one is on PATH, else oha), "
                           "oha, wrk2 or capload (ours, for connections that come and go)")
    http: str = setting("HTTP", "1.1", choice(HTTP_VERSIONS),
                        "the client's HTTP: 1.1, or 2 (h2 by ALPN over TLS=lb or both, h2c by prior knowledge in clear "
                        "text; oha only: each connection one user's, its requests one stream at a time)")
    connection_life: str = setting("CONNECTION_LIFE", "keep", choice(CONNECTION_LIVES),
                                   "how long a client's connection lives: keep (the whole step), per-user (a user's "
                                   "SESSION_REQUESTS requests share one, the next user opens a new one: capload) or "
                                   "per-request (over TLS a handshake each: oha over HTTP/1.1, capload)")
    connections: int | None = setting("CONNECTIONS", "auto", auto_or(integer(1, MAX_CONNECTIONS)),
                                      "connections of a step: auto (enough users that each pauses THINK_MS "
                                      "between requests at the step's rate, at least 16) or a number")
    threads: int = setting("THREADS", "2", integer(1, 64), "wrk2's threads (fewer when the connections are fewer)")
    timeout_s: int = setting("TIMEOUT_S", "10", integer(1, 600),
                             "socket timeout per request (s); responses slower than 5 s are failures anyway")
    start_rate: float = setting("START_RATE", "50", number(0, 1_000_000, low_open=True),
                                "the search's first rate (requests/s)")
    growth: float = setting("GROWTH", "2", number(1, 10, low_open=True),
                            "the search multiplies the rate by this until a step fails the SLO")
    precision_pct: float = setting("PRECISION_PCT", "5", number(0.5, 50),
                                   "then bisects until the bracket is within this %", quick="7")
    step_s: int = setting("STEP_S", "20", integer(1, 3600),
                          "each step's length (s); wrk2 needs at least 20: its first 10 s calibrate", quick="5")
    warmup_s: int = setting("WARMUP_S", "20", integer(0, 3600), "the warm-up before each search (s)", quick="5")
    hold_s: int = setting("HOLD_S", "60", integer(0, 3600),
                          "the capacity a search found is offered this long, in windows of STEP_S each judged "
                          "by the SLO, before it is reported (\"held 60 s\"); a rate that does not hold is a "
                          "failure and the search goes on below; 0: one confirm step instead", quick="15")
    state_between: str = setting("STATE_BETWEEN", "expire", choice(STATE_BETWEEN),
                                 "the nodes' state before each target's search: expire, every HTTP session of "
                                 "every application ended through Tomcat's Manager; restart, the nodes re-created "
                                 "(a fresh JVM); carry, whatever the steps before left behind")
    max_steps: int = setting("MAX_STEPS", "24", integer(2, 200), "the most steps a search may take")
    repeats: int = setting("REPEATS", "1", integer(1, 20), "how often each search runs")
    slo: Slo = nested(Slo)
    monitor: bool = setting("MONITOR", "on", switch(("on", "off"), "on"),
                            "on: PCP logs every host during the run and each step gets the hosts' figures; off: "
                            "nothing logs (make bench-overhead compares the two)")
    jfr: Jfr = nested(Jfr)
    kinds: dict[str, Any] = field(default_factory=dict)
    # SCENARIO_FILE read and checked (load_settings); None without one.
    user_scenario: scenarios.UserScenario | None = None

    @property
    def smoke(self) -> bool:
        """QUICK=1 with its short hold: a smoke run. A QUICK cluster capacity held 15 s did not hold for 60 s under
        an independent wrk2 (p99 2.32 s) where one held 60 s did (docs/findings.md, 2026-12-01): its figures say
        the testbed works, not what a target carries."""
        return self.quick and self.hold_s < SMOKE_BELOW_HOLD_S

    @property
    def hold_windows(self) -> int:
        """The hold's windows, each one step of STEP_S (at least one); 0 without a hold."""
        return max(1, round(self.hold_s / self.step_s)) if self.hold_s > 0 else 0

    def problems(self) -> list[str]:
        if self.workload == "session" and self.scenario != "session":
            return [f"WORKLOAD='session' is not allowed with SCENARIO='{self.scenario}': sessions belong to users, "
                    "and only SCENARIO=session sends a user id"]
        if self.hold_windows >= self.max_steps:
            # The hold's windows are steps of the search: a hold this long runs out of steps before it ends (one
            # that starts late may still, and says how long it held).
            return [f"HOLD_S='{self.hold_s}' is not allowed with STEP_S={self.step_s} and MAX_STEPS={self.max_steps}:"
                    f" its {self.hold_windows} windows are as many steps as a whole search may take; use a HOLD_S "
                    f"of at most {(self.max_steps // 2) * self.step_s} s, longer steps, or a MAX_STEPS of at least "
                    f"{2 * self.hold_windows}"]
        return scenarios.problems(self.scenario_file) if self.scenario_file else []

    def as_dict(self) -> dict:
        """As run.json records it: the shared settings, and every kind's beside them. SCENARIO_FILE only when
        given, with the sha256 of what it held (a run without one records what runs before it did, so their
        history matches)."""
        shared = {name: value for name, value in asdict(replace(self, kinds={}, user_scenario=None)).items()
                  if name not in ("kinds", "user_scenario", "scenario_file")}
        if self.user_scenario is not None:
            shared |= {"scenario_file": self.scenario_file, "scenario_sha256": self.user_scenario.sha256}
        return shared | {name: value for kind in self.kinds.values() for name, value in asdict(kind).items()}


def p99_thresholds() -> Rule:
    """[TARGET:]MS@RATE items separated by spaces or commas, each (target or None, ms, rate)."""
    def parse(text: str) -> tuple:
        items = []
        for item in re.split(r"[\s,]+", text.strip()):
            match = gate_verdict.P99_ITEM.fullmatch(item) if item else None
            if item and not (match and float(match["ms"]) > 0 and float(match["rate"]) > 0):
                raise ValueError(item)
            if match:
                items.append((match["target"], float(match["ms"]), float(match["rate"])))
        return tuple(items)
    return Rule("empty, or [TARGET:]MS@RATE items separated by spaces, MS and RATE above 0 (e.g. 250@800 or "
                "node1:250@400)", parse)


def baseline_name() -> Rule:
    def parse(text: str) -> str:
        if text and not baselines.TAG.fullmatch(text):
            raise ValueError(text)
        return text
    return Rule("empty, or a baseline's tag or a run id (1 to 64 letters, digits, '.', '_' or '-')", parse)


@dataclass(frozen=True)
class GateKeys:
    """make gate's settings, each by its own rule; gate_settings() then checks what depends on the bench (a p99
    threshold's target) and on the mode."""
    mode: str = setting("GATE_MODE", gate_verdict.DEFAULT_MODE, choice(gate_verdict.MODES),
                        "duet: DUET_A (baseline; by default the accepted baseline's build) and DUET_B (candidate; "
                        "by default this build) measured together on twin slots; history: the run against an "
                        "accepted baseline's stored capacities")
    bench: str = setting("GATE_BENCH", gate_verdict.DEFAULT_BENCH, choice(gate_verdict.BENCHES),
                         "GATE_MODE=history: the bench the gate measures (the benches that search capacities)")
    repeats: int = setting("GATE_REPEATS", str(significance.MIN_REPEATS), integer(1, 20),
                           "its searches' repeats, unless REPEATS is given")
    drop_pct: float = setting("GATE_DROP_PCT", f"{gate_verdict.DEFAULT_DROP_PCT:g}", number(0, 100, high_open=True),
                              "the capacity fell when lower than the baseline's by more than this % at the "
                              "interval's confidence")
    p99: tuple = setting("GATE_P99_MS", "", p99_thresholds(),
                         "p99 thresholds measured after the searches (GATE_MODE=history); TARGET defaults to the "
                         "bench's last, the cluster in bench-cluster")
    rounds: int = setting("CALIBRATE_ROUNDS", "5", integer(1, 10),
                          "make gate-calibrate: rounds, each an A/A duet and one of every known 5 % drop, in an "
                          "order drawn at random")
    baseline: str = setting("BASELINE", "", baseline_name(),
                            "a tag or run id of an accepted baseline; empty: the last accepted run of the same bench")


def gate_settings(raw: dict[str, str], benches: dict[str, tuple[str, ...]]) -> gate_verdict.GateSettings:
    """make gate's settings from the raw values (raw_settings()): each key by its rule, then a p99 threshold's
    target among the bench's (`benches`: bench name → its targets) and no p99 threshold in a duet;
    GateSettingsError naming every problem."""
    problems: list[str] = []
    keys = read(GateKeys, {**defaults(GateKeys), **{k: v for k, v in raw.items() if v}}, False, problems)
    targets = benches.get(keys.bench or "", ())
    thresholds = []
    for target, ms, rate in keys.p99 or ():
        target = target or (targets[-1] if targets else "")
        if targets and target not in targets:
            problems.append(f"GATE_P99_MS's target '{target}' is not one of {keys.bench}'s: use "
                            f"{', '.join(targets)} (or none: the {targets[-1]})")
        thresholds.append(gate_verdict.P99Threshold(target, ms, rate))
    if keys.mode == "duet" and thresholds:
        problems.append("GATE_P99_MS cannot be judged with GATE_MODE=duet (a duet searches capacities only): use "
                        "GATE_MODE=history for p99 thresholds")
    if problems:
        raise gate_verdict.GateSettingsError("\n".join(problems))
    return gate_verdict.GateSettings(keys.bench, keys.baseline or None, keys.drop_pct, tuple(thresholds),
                                     keys.repeats, keys.mode, keys.rounds)


def raw_settings(environ: dict[str, str] | None = None, kinds: dict[str, type] | None = None) -> dict[str, str]:
    """Every declared key (the shared ones, each kind's in `kinds`, the gate's), as the environment gives it or
    else as its default, unchecked."""
    environ = os.environ if environ is None else environ
    raw = {}
    for cls in (BenchSettings, GateKeys, *(kinds or {}).values()):
        raw.update(defaults(cls))
    return {key: environ[key].strip() if key in environ else value for key, value in raw.items()}


def load_settings(environ: dict[str, str] | None = None, kinds: dict[str, type] | None = None) -> BenchSettings:
    """The shared settings and each kind's own (`kinds`: kind name → its settings class), the environment over
    the defaults, everything checked; SettingsError naming every problem."""
    raw = raw_settings(environ, kinds)
    errors: list[str] = []
    quick = raw["QUICK"] == "1"  # any other value than 0 or 1 is refused by the read below
    settings = read(BenchSettings, raw, quick, errors)
    own = {name: read(cls, raw, quick, errors) for name, cls in (kinds or {}).items()}
    if not errors:
        errors = settings.problems() + [p for kind in own.values() for p in kind.problems()]
    if errors:
        raise SettingsError("\n".join(errors))
    scenario = scenarios.load(settings.scenario_file) if settings.scenario_file else None
    return replace(settings, kinds=own, user_scenario=scenario)


def check_for_driver(settings: BenchSettings, driver_name: str) -> BenchSettings:
    """Driver-specific limits: wrk2 speaks HTTP/1.1 only and keeps every connection for the step, oha keeps
    them or opens one per request over HTTP/1.1 only, capload alone opens one per user's session; wrk2's steps
    must outlast its calibration (QUICK raises them to the minimum), and it cannot read answers to HEAD
    (wg/wrk#198); oha and capload send one method, one set of headers and one body for every request of a step."""
    if driver_name == "wrk2" and settings.http == "2":
        raise SettingsError("HTTP='2' cannot run with LOADGEN=wrk2: wrk2 speaks HTTP/1.1 only; use LOADGEN=oha "
                            "(or auto), or HTTP=1.1")
    life = settings.connection_life
    if life != "keep" and driver_name == "wrk2":
        raise SettingsError(f"CONNECTION_LIFE='{life}' cannot run with LOADGEN=wrk2: wrk2 keeps each connection for "
                            "the whole step; use LOADGEN=capload (or auto), or CONNECTION_LIFE=keep")
    if life == "per-user" and driver_name == "oha":
        raise SettingsError("CONNECTION_LIFE='per-user' cannot run with LOADGEN=oha: oha keeps each connection for "
                            "the step or opens one per request; use LOADGEN=capload (or auto)")
    if life == "per-request" and driver_name == "oha" and settings.http == "2":
        raise SettingsError("CONNECTION_LIFE='per-request' cannot run with HTTP=2 and LOADGEN=oha: oha opens a "
                            "connection per request over HTTP/1.1 only; use LOADGEN=capload (or auto), or HTTP=1.1")
    scenario = settings.user_scenario
    heads = [r for r in scenario.requests if r.method == "HEAD"] if scenario is not None else []
    if driver_name == "wrk2" and heads:
        raise SettingsError(
            f"SCENARIO_FILE {settings.scenario_file}:{heads[0].line}: wrk2 cannot send HEAD: its parser waits for "
            "the body the answer's Content-Length announces, which a HEAD answer never has; use LOADGEN=oha")
    mixed = scenario.mixed() if scenario is not None else None
    if driver_name in ("oha", "capload") and mixed is not None:
        first = scenario.requests[0]
        differs = mixed.differs(first)
        raise SettingsError(
            f"SCENARIO_FILE {settings.scenario_file}:{mixed.line}: this request's {' and '.join(differs)} "
            f"{'differs' if len(differs) == 1 else 'differ'} from the first request's (line {first.line}), and "
            f"{driver_name} sends the same for every request: use LOADGEN=wrk2 (WRK2=/path/to/wrk2), or give every request the same")
    if driver_name == "wrk2":
        if settings.quick and settings.step_s < WRK2_MIN_STEP_S:
            return replace(settings, step_s=WRK2_MIN_STEP_S)
        if settings.step_s < WRK2_MIN_STEP_S:
            raise SettingsError(
                f"STEP_S='{settings.step_s}' is too short for wrk2: its first 10 s are calibration, "
                f"use at least {WRK2_MIN_STEP_S}")
    return settings
